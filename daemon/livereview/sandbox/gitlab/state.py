"""In-memory state of the fake GitLab: setup, mutations, todos, faults and the request log.

Shapes follow the recorded gitlab.com responses in tests/fixtures/gitlab and GitLab's
own source (gitlabhq/gitlabhq: lib/api/*.rb, lib/api/entities/*.rb, app/services/todo_service.rb).
The data model is in model.py, lookups and JSON payloads in payloads.py; their
names stay importable from here. Every public method takes the single re-entrant lock, so the
HTTP threads and a test may share it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from email.utils import formatdate

from livereview.sandbox.gitlab.model import (
    JSON,
    LEADING_MENTIONS,
    NOT_FOUND,
    Award,
    Commit,
    Discussion,
    Files,
    GitLabError,
    MergeRequest,
    Note,
    Project,
    Todo,
    User,
    Version,
    diff_lines,
    iso,
    mentions,
    sha1,
    unified_diff,
)
from livereview.sandbox.gitlab.payloads import GitLabPayloads
from livereview.sandbox.gitlab.positions import traced
from livereview.sandbox.gitlab.reviews import GitLabReviews
from livereview.sandbox.loopback import Fault, LoopbackTraffic, locked

__all__ = [
    "JSON", "NOT_FOUND", "Award", "Commit", "Discussion", "FakeGitLab", "Fault", "Files",
    "GitLabError", "GitLabPayloads", "MergeRequest", "Note", "Project", "Todo", "User", "Version",
    "diff_lines", "iso", "unified_diff",
]


class FakeGitLab(GitLabReviews, LoopbackTraffic):
    """A small GitLab: users, projects, merge requests, commits, discussions, awards, todos."""

    def __init__(
        self,
        *,
        token: str = "glpat-fake-token",  # noqa: S107 - a fake's token
        bot_username: str = "livereview",
        clock: Callable[[], datetime] | None = None,
        updated_at_throttle_seconds: float = 60.0,
        rate_limit_per_minute: int | None = 600,
    ) -> None:
        self.lock = threading.RLock()
        self._clock = clock or (lambda: datetime.now(UTC))
        self.throttle_seconds = updated_at_throttle_seconds
        # gitlab.com's; None: no RateLimit-* headers, as self-managed GitLab by default
        self.rate_limit_per_minute = rate_limit_per_minute
        self.base_url = "http://gitlab.example.com"  # the server sets its own URL on start
        self.bot_username = bot_username
        # GitLab ≥ 16.7 answers a moved project's former path with 301 (GET) or 405 (other
        # methods); False: older versions, which answer it for the project.
        self.redirects_moved_projects = True
        self.tokens: dict[str, str] = {token: bot_username}  # token -> username; add more freely
        # username -> the project ids it may read; a user not in it reads every project
        self.readable: dict[str, set[int]] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.users: dict[str, User] = {}
        self.projects: dict[int, Project] = {}
        self._notes: dict[int, Note] = {}
        self._todos: list[Todo] = []
        self._faults: list[Fault] = []
        self._seq: dict[str, int] = {}
        self._window = (0, 0)
        self._diff_cache = {}
        self.add_user(bot_username, "LiveReview Bot", bot=True)

    # ---- helpers (callers hold the lock) -------------------------------------------------
    def now(self, when: datetime | None = None) -> datetime:
        dt = when or self._clock()
        return dt if dt.tzinfo else dt.replace(tzinfo=UTC)

    def _next(self, kind: str, start: int = 1) -> int:
        self._seq[kind] = self._seq.get(kind, start - 1) + 1
        return self._seq[kind]

    def _user(self, username: str) -> User:
        if username not in self.users:
            self.add_user(username)
        return self.users[username]

    def _commit(self, p: Project, tree: dict[str, str], title: str, author: User) -> str:
        sha = sha1("commit", p.path, self._next("sha"), title)
        p.trees[sha] = tree
        p.commits[sha] = Commit(title, author, self.now())
        return sha

    def _new_version(self, mr: MergeRequest, base: str, head: str) -> None:
        v = Version(self._next("version"), head, base, base, self.now(), list(mr.commits))
        mr.versions.append(v)

    def _touch(self, mr: MergeRequest, when: datetime, *, throttled: bool) -> None:
        # ThrottledTouch (app/models/concerns/throttled_touch.rb): a note touches its MR only if
        # the MR's updated_at is more than TOUCH_INTERVAL (1 minute) old.
        elapsed = (when - mr.updated_at).total_seconds()
        if elapsed > 0 and (not throttled or elapsed > self.throttle_seconds):
            mr.updated_at = when

    # ---- setup API (used by tests and the demo) --------------------------------------------
    @locked
    def add_user(self, username: str, name: str | None = None, *, bot: bool = False) -> JSON:
        if username not in self.users:
            self.users[username] = User(self._next("user"), username,
                                        name or username.replace(".", " ").title(), bot, self.now())
        return self.user_json(self.users[username], full=True)

    @locked
    def add_token_bot(self, owner: str, *, group: bool = False, name: str = "bot token") -> str:
        """The user GitLab creates for a project (or group) access token, named as GitLab
        names it: `project_{id}_bot_{random}` / `group_{id}_bot_{random}`
        (https://docs.gitlab.com/user/project/settings/project_access_tokens/#bot-users-for-projects)."""
        owner_id = self._next("group") if group else self.find_project(owner).id
        kind = "group" if group else "project"
        username = f"{kind}_{owner_id}_bot_{sha1(kind, owner, self._next('token'))[:32]}"
        self.add_user(username, name, bot=True)
        return username

    @locked
    def add_service_account(self, *, group_id: int | None = None,
                            name: str = "Service account user") -> str:
        """A service account with the username GitLab generates: `service_account_{random}`,
        or `service_account_group_{id}_{random}` (https://docs.gitlab.com/api/service_accounts/)."""
        digest = sha1("service_account", group_id, self._next("service_account"))[:32]
        username = (f"service_account_group_{group_id}_{digest}" if group_id is not None
                    else f"service_account_{digest}")
        self.add_user(username, name, bot=True)
        return username

    @locked
    def add_project(self, path: str) -> JSON:
        path = path.strip("/")
        try:
            return self.project_json(self.find_project(path))
        except GitLabError:
            p = Project(self._next("project"), path, self.now())
            self.projects[p.id] = p
            return self.project_json(p)

    @locked
    def move_project(self, path: str, new_path: str) -> None:
        """Rename or transfer a project: its old path keeps leading to it, as GitLab's
        redirect routes do (https://docs.gitlab.com/user/project/working_with_projects/#rename-a-repository);
        how the API answers it: `redirects_moved_projects`."""
        project = self.find_project(path)
        project.redirects.append(project.path)
        project.path = new_path.strip("/")

    @locked
    def add_mr(self, project: str, *, title: str, description: str = "", author: str,
               source_branch: str = "feature", target_branch: str = "main",
               files: Files | None = None) -> int:
        self.add_project(project)
        p, user, files = self.find_project(project), self._user(author), files or {}
        base_tree = dict(p.trees.get(p.branches.get(target_branch, ""), {}))
        base_tree.update({k: old for k, (old, _) in files.items() if old != ""})
        base = self._commit(p, base_tree, f"Prepare {target_branch}", user)
        p.branches[target_branch] = base
        head_tree = {**base_tree, **{k: new for k, (_, new) in files.items()}}
        head_tree = {k: v for k, v in head_tree.items() if v != ""}
        head = self._commit(p, head_tree, title, user)
        p.branches[source_branch] = head
        now = self.now()
        mr = MergeRequest(self._next("mr", 1001), p.next_iid, p, title, description, user,
                          source_branch, target_branch, now, now, base_sha=base, commits=[head])
        p.next_iid += 1
        p.mrs[mr.iid] = mr
        self._new_version(mr, base, head)
        return mr.iid

    @locked
    def push(self, project: str, iid: int, *, files: Files | None = None, title: str = "update",
             force: bool = False) -> str:
        """A new commit on the source branch; `force` rewrites history (new base and head)."""
        mr, files = self.find_mr(project, iid), files or {}
        p = mr.project
        base_tree = dict(p.trees[mr.base_sha])
        for path, (old, _) in files.items():
            if force or (path not in base_tree and path not in p.trees[mr.head_sha]):
                base_tree.pop(path, None)
                base_tree.update({path: old} if old != "" else {})
        if force:
            mr.base_sha = self._commit(p, base_tree, f"Rebase {mr.target_branch}", mr.author)
        else:
            p.trees[mr.base_sha] = base_tree
        head_tree = {**p.trees[mr.head_sha], **{k: new for k, (_, new) in files.items()}}
        head_tree = {k: v for k, v in head_tree.items() if v != ""}
        sha = self._commit(p, head_tree, title, mr.author)
        mr.commits = [sha] if force else [*mr.commits, sha]
        p.branches[mr.source_branch] = sha
        self._new_version(mr, mr.base_sha, sha)
        self._trace_positions(mr)
        mr.updated_at = max(mr.updated_at, self.now())
        compare = (f"/{p.path}/-/merge_requests/{mr.iid}/diffs?"
                   f"diff_id={mr.versions[-1].id}&start_sha={mr.versions[-2].head}")
        body = (f"added 1 commit\n\n<ul><li>{sha[:8]} - {title}</li></ul>\n\n"
                f"[Compare with previous version]({compare})")
        self._add_note(mr, mr.author, body, system=True)
        return sha

    @staticmethod
    def _trace_positions(mr: MergeRequest) -> None:
        """Diff notes follow their line to the new version, or stay outdated (positions.py)."""
        for d in mr.discussions:
            first = d.notes[0] if d.notes else None
            if first is None or first.position is None:
                continue
            moved = traced(first.position, mr.project.trees, mr.base_sha, mr.head_sha)
            if moved is None:
                continue  # outdated: the position stays on the old version
            for note in d.notes:
                note.position = dict(moved)

    @locked
    def set_state(self, project: str, iid: int, state: str) -> None:
        if state not in {"opened", "closed", "merged", "locked"}:
            raise ValueError(state)
        mr, now = self.find_mr(project, iid), self.now()
        mr.state, mr.state_by = state, mr.author if state != "opened" else None
        mr.merged_at = now if state == "merged" else None
        mr.closed_at = now if state == "closed" else None
        mr.updated_at = max(mr.updated_at, now)

    @locked
    def set_reviewers(self, project: str, iid: int, usernames: list[str], *, by: str) -> None:
        """PUT …/merge_requests/:iid with `reviewer_ids`, as `by`: MergeRequests::UpdateService
        bumps updated_at and SystemNotes::IssuablesService#change_issuable_reviewers writes,
        as `by`, "requested review from @a, @b and @c and removed review request for @d"."""
        mr, now = self.find_mr(project, iid), self.now()
        old, new = list(mr.reviewers), [self._user(name) for name in usernames]
        mr.reviewers = new
        added = [u for u in new if u not in old]
        removed = [u for u in old if u not in new]
        if not (added or removed):
            return
        mr.updated_at = max(mr.updated_at, now)
        self._review_todos(mr, added, self._user(by))
        parts = []
        if added:
            parts.append(f"requested review from {_sentence(added)}")
        if removed:
            parts.append(f"removed review request for {_sentence(removed)}")
        self._add_note(mr, self._user(by), " and ".join(parts), system=True)

    @locked
    def rerequest_review(self, project: str, iid: int, reviewer: str, *, by: str) -> None:
        """POST …/merge_requests/:iid/reviewers/:user/… ("Re-request review" in the UI):
        the reviewer stays; SystemNotes::IssuablesService#request_review writes, as `by`,
        "requested review from @reviewer"."""
        mr = self.find_mr(project, iid)
        user = self._user(reviewer)
        if user not in mr.reviewers:
            raise GitLabError(404, "404 Reviewer Not Found")
        mr.updated_at = max(mr.updated_at, self.now())
        self._review_todos(mr, [user], self._user(by))
        self._add_note(mr, self._user(by), f"requested review from @{user.username}",
                       system=True)

    def _review_todos(self, mr: MergeRequest, reviewers: list[User], by: User) -> None:
        """TodoService#reassigned_reviewable / #create_request_review_todo: a pending
        `review_requested` to-do for each new reviewer (but the one who asked), about the MR
        itself (no note); create_todos skips a user with a pending to-do on the MR."""
        for user in reviewers:
            pending = any(t.user is user and t.mr is mr and t.state == "pending"
                          for t in self._todos)
            if user is not by and not pending:
                self._todos.append(Todo(self._next("todo"), user, by, mr, None,
                                        "review_requested", self.now(), self.now()))

    # ---- notes ---------------------------------------------------------------------------
    def _add_note(self, mr: MergeRequest, author: User, body: str, *,
                  discussion: Discussion | None = None, position: JSON | None = None,
                  system: bool = False, thread: bool = False, created_at: datetime | None = None,
                  api: bool = False) -> Note:
        when = self.now(created_at)
        if discussion is None:
            pos = self._position(mr, position, api=api) if position is not None else None
            kind = "DiffNote" if pos else ("DiscussionNote" if thread and not system else None)
            discussion = Discussion(sha1("discussion", self._next("discussion")), mr,
                                    individual=kind is None)
            mr.discussions.append(discussion)
        else:
            first = discussion.notes[0]
            if discussion.individual and not first.system:  # replying converts it to a thread
                discussion.individual, first.type = False, "DiscussionNote"
            kind, pos = first.type, first.position
        note = Note(self._next("note", 101), discussion, author, body, when, when, system, kind,
                    dict(pos) if pos else None)
        discussion.notes.append(note)
        self._notes[note.id] = note
        if not system:
            self._touch(mr, when, throttled=True)
            self._mark_done(mr, author)
            self._mention_todos(note, set())
        return note

    def _mark_done(self, mr: MergeRequest, user: User) -> None:
        for t in self._todos:
            if t.user is user and t.mr is mr and t.state == "pending":
                t.state, t.updated_at = "done", self.now()

    def _mention_todos(self, note: Note, skip: set[str]) -> None:
        # TodoService#create_mention_todos: directly addressed users first, then mentioned
        # users; create_todos skips a user who already has a pending todo on the same MR.
        leading = LEADING_MENTIONS.match(note.body)  # "@a @b please ..." addresses a and b directly
        direct = mentions(leading.group(1)) if leading else []
        for action, names in (("directly_addressed", direct), ("mentioned", mentions(note.body))):
            for name in dict.fromkeys(names):
                user, mr = self.users.get(name), note.discussion.mr
                pending = any(t.user is user and t.mr is mr and t.state == "pending"
                              for t in self._todos)
                if user is None or name in skip or pending:
                    continue
                self._todos.append(Todo(self._next("todo"), user, note.author, mr, note, action,
                                        self.now(), self.now()))

    @locked
    def add_note(self, project: str, iid: int, *, author: str, body: str,
                 reply_to_discussion: str | None = None, position: JSON | None = None,
                 system: bool = False, created_at: datetime | None = None,
                 thread: bool = False, api: bool = False) -> JSON:
        """A comment as the web UI makes it (`api=True`: as the REST API does)."""
        mr = self.find_mr(project, iid)
        disc = self.find_discussion(mr, reply_to_discussion) if reply_to_discussion else None
        return self.note_json(self._add_note(
            mr, self._user(author), body, discussion=disc, position=position, system=system,
            thread=thread, created_at=created_at, api=api))

    @locked
    def create_discussion(self, project: str, iid: int, *, author: str, body: str,
                          position: JSON | None = None) -> JSON:
        """POST .../discussions: a DiffNote with a position, else a DiscussionNote thread."""
        mr = self.find_mr(project, iid)
        note = self._add_note(mr, self._user(author), body, position=position, thread=True,
                              api=True)
        return self.discussion_json(note.discussion)

    @locked
    def edit_note(self, project: str, iid: int, note_id: int, body: str,
                  *, user: str | None = None) -> JSON:
        mr = self.find_mr(project, iid)
        note = self.find_note(mr, note_id)
        if user is not None and note.author.username != user:
            raise GitLabError(403, "403 Forbidden")
        before = set(mentions(note.body))
        note.body, note.updated_at = body, self.now()
        self._touch(mr, note.updated_at, throttled=True)
        self._mark_done(mr, note.author)  # TodoService#update_note -> handle_note
        self._mention_todos(note, before)
        return self.note_json(note)

    @locked
    def delete_note(self, project: str, iid: int, note_id: int, *, user: str | None = None) -> None:
        mr = self.find_mr(project, iid)
        note = self.find_note(mr, note_id)
        if user is not None and note.author.username != user:
            raise GitLabError(403, "403 Forbidden")
        note.discussion.notes.remove(note)
        del self._notes[note.id]
        if not note.discussion.notes:
            mr.discussions.remove(note.discussion)

    @locked
    def resolve(self, project: str, iid: int, discussion_id: str, resolved: bool,
                *, user: str, note_id: int | None = None) -> JSON:
        """Resolve (or reopen) a thread, or with `note_id` one note of it; answers the thread."""
        mr = self.find_mr(project, iid)
        d = self.find_discussion(mr, discussion_id)
        notes = [self.find_note(mr, note_id)] if note_id is not None else d.notes
        if not any(n.resolvable for n in notes):
            raise GitLabError(403, "403 Forbidden")
        for n in notes:
            if n.resolvable:
                n.resolved = resolved
                n.resolved_by = self._user(user) if resolved else None
                n.resolved_at = self.now() if resolved else None
        return self.discussion_json(d)

    # ---- awards ---------------------------------------------------------------------------
    @locked
    def award(self, project: str, iid: int, note_id: int, *, user: str, name: str) -> JSON:
        mr = self.find_mr(project, iid)
        note, who = self.find_note(mr, note_id), self._user(user)
        if any(a.user is who and a.name == name for a in note.awards):
            # lib/api/award_emoji.rb: not_found!("Award Emoji #{service[:message]}"), where
            # AwardEmojis::AddService returns award.errors.full_messages (an Array); the spec
            # (spec/requests/api/award_emoji_spec.rb) expects 404 matching "has already been taken".
            raise GitLabError(404, '404 Award Emoji ["Name has already been taken"] Not Found')
        a = Award(self._next("award"), name, who, self.now(), note)
        note.awards.append(a)
        self._mark_done(mr, who)  # TodoService#new_award_emoji; updated_at is not touched
        return self.award_json(a)

    @locked
    def delete_award(self, project: str, iid: int, note_id: int, award_id: int, *,
                     user: str) -> None:
        note = self.find_note(self.find_mr(project, iid), note_id)
        award = next((a for a in note.awards if a.id == int(award_id)), None)
        if award is None:
            raise GitLabError(404, NOT_FOUND)
        if award.user.username != user:
            raise GitLabError(401, "401 Unauthorized")
        note.awards.remove(award)

    # ---- todos and tokens -------------------------------------------------------------------
    @locked
    def mark_todo_done(self, username: str, todo_id: int | None = None) -> JSON | None:
        """POST /todos/:id/mark_as_done, or with no id POST /todos/mark_as_done (every todo)."""
        found = [t for t in self.todos(username) if todo_id is None or t.id == todo_id]
        if todo_id is not None and not found:
            raise GitLabError(404, NOT_FOUND)
        for t in found:
            t.state, t.updated_at = "done", self.now()
        return self.todo_json(found[0]) if todo_id is not None else None

    @locked
    def add_token(self, token: str, username: str, *, projects: tuple[str, ...] = ()) -> None:
        """A token acting as `username`, which may then read only `projects` when some are
        named: a group or project access token's bot user is a member of its group or
        project alone (https://docs.gitlab.com/user/project/settings/project_access_tokens/)."""
        self._user(username)
        self.tokens[token] = username
        if projects:
            self.readable[username] = {self.find_project(p).id for p in projects}

    def can_read(self, username: str, project: Project) -> bool:
        """`can?(current_user, :read_project, project)` for private projects: members only."""
        readable = self.readable.get(username)
        return readable is None or project.id in readable

    @locked
    def user_for_token(self, token: str | None) -> User:
        username = self.tokens.get(token or "")
        if username is None:
            raise GitLabError(401, "401 Unauthorized")
        return self._user(username)

    # ---- rate-limit headers (faults and the request log: LoopbackTraffic) ----------------
    @locked
    def rate_limit_headers(self) -> dict[str, str]:
        """RateLimit-* as gitlab.com sends them, counting requests per clock minute."""
        limit = self.rate_limit_per_minute
        if limit is None:
            return {}
        start = int(self.now().timestamp()) // 60 * 60
        count = self._window[1] + 1 if self._window[0] == start else 1
        self._window = (start, count)
        return {"RateLimit-Limit": str(limit), "RateLimit-Observed": str(count),
                "RateLimit-Remaining": str(max(0, limit - count)),
                "RateLimit-Reset": str(start + 60),
                "RateLimit-ResetTime": formatdate(start + 60, usegmt=True)}


def _sentence(users: list[User]) -> str:
    """Array#to_sentence of the users' references: "@a", "@a and @b", "@a, @b and @c"."""
    names = [f"@{u.username}" for u in users]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
