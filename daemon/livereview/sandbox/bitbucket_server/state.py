"""In-memory state of the fake Bitbucket Data Center: setup, mutations, faults, the request
log.

Behaviour follows the REST reference (see model.py): a comment action —
added, replied, edited, deleted — is a `COMMENTED` activity of the pull request and moves
its `updatedDate`; a comment with replies cannot be deleted (409); an update needs the
comment's current `version` (409 otherwise); reactions exist only when the server has them
(`reactions=False` is a Bitbucket Server 6, whose comment-likes plugin has likes only).
Every public method takes the single re-entrant lock, so the HTTP threads and a test may
share it. Not modelled on purpose: permissions beyond "the token is valid" (and `forbid`),
tasks, drafts, pending comments, comment drift after a push.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from livereview.sandbox.bitbucket_server.model import (
    JSON,
    Activity,
    BitbucketError,
    Comment,
    Commit,
    Files,
    PullRequest,
    Repo,
    User,
    not_permitted,
)
from livereview.sandbox.bitbucket_server.payloads import BitbucketPayloads
from livereview.sandbox.loopback import Fault, LoopbackTraffic, locked

EMOTICONS = ("thumbsup", "thumbsdown", "heart", "thinking_face", "laughing")


def _sha(*parts: object) -> str:
    return hashlib.sha1(":".join(map(str, parts)).encode(), usedforsecurity=False).hexdigest()


class FakeBitbucketDC(BitbucketPayloads, LoopbackTraffic):
    """A small Bitbucket Data Center: users, repos, pull requests, comments, reactions."""

    def __init__(self, *, token: str = "fake-http-access-token",  # noqa: S107 - a fake's
                 bot_name: str = "livereview", clock: Callable[[], datetime] | None = None,
                 version: str = "8.19.1", reactions: bool = True) -> None:
        self.lock = threading.RLock()
        self._clock = clock or (lambda: datetime.now(UTC))
        self.base_url = "https://bitbucket.example.com"  # the server sets its own on start
        self.version = version if reactions else "6.10.17"
        self.reactions_enabled = reactions
        self.bot_name = bot_name
        self.tokens: dict[str, str] = {token: bot_name}  # token -> user name; add more freely
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.users: dict[str, User] = {}
        self.repos: dict[str, Repo] = {}
        self.forbidden: set[tuple[str, str]] = set()  # (user name, repo path) denied
        self._faults: list[Fault] = []
        self._seq: dict[str, int] = {}
        # (comment id, emoticon, user name) -> when; Bitbucket shows no reaction times, the
        # benchmarks read time-to-ack from here.
        self.reacted_at: dict[tuple[int, str, str], datetime] = {}
        # Data Center's reaction picker, the only names its comment-likes API takes (the
        # enum its clients send); a test may narrow it, as a server would be configured.
        self.emoticons: tuple[str, ...] = EMOTICONS
        self.add_user(bot_name, "LiveReview Bot")

    # ---- helpers (callers hold the lock) -------------------------------------------------
    def now(self, when: datetime | None = None) -> datetime:
        dt = when or self._clock()
        dt = dt if dt.tzinfo else dt.replace(tzinfo=UTC)
        return dt.replace(microsecond=dt.microsecond // 1000 * 1000)  # milliseconds

    def _next(self, kind: str, start: int = 1) -> int:
        self._seq[kind] = self._seq.get(kind, start - 1) + 1
        return self._seq[kind]

    def user(self, name: str) -> User:
        if name not in self.users:
            self.add_user(name)
        return self.users[name]

    def rate_limit_headers(self) -> dict[str, str]:
        """Bitbucket Data Center sends no quota headers on success (a 429 has Retry-After)."""
        return {}

    @locked
    def user_for_token(self, authorization: str | None) -> User | None:
        """`Authorization: Bearer <token>` (HTTP access tokens); None is anonymous."""
        scheme, _, token = (authorization or "").partition(" ")
        if not token:
            return None
        name = self.tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if name is None:
            raise BitbucketError(401, "Authentication failed. Please check your credentials "
                                 "and try again.", "com.atlassian.bitbucket.auth."
                                 "IncorrectPasswordAuthenticationException")
        return self.users[name]

    @locked
    def check_access(self, user: User | None, repo: Repo) -> None:
        if user is None or (user.name, repo.path) in self.forbidden:
            raise not_permitted()

    def _commit(self, repo: Repo, tree: dict[str, str], message: str, author: User,
                parents: list[str]) -> str:
        sha = _sha("commit", repo.path, self._next("sha"), message)
        repo.commits[sha] = Commit(sha, tree, message, author, self.now(), parents)
        return sha

    def _activity(self, pr: PullRequest, user: User, action: str, comment: Comment | None = None,
                  comment_action: str = "", when: datetime | None = None) -> None:
        at = when or self.now()
        pr.activities.append(Activity(self._next("activity", 100), at, user, action, comment,
                                      comment_action))
        pr.updated = max(pr.updated, at)

    # ---- setup API (used by tests and drivers) ---------------------------------------------
    @locked
    def add_user(self, name: str, display_name: str | None = None, *,
                 service: bool = False) -> JSON:
        """A user; `service` is the user behind a project or repository HTTP access token."""
        if name not in self.users:
            self.users[name] = User(self._next("user", 100), name, display_name or name.title(),
                                    "SERVICE" if service else "NORMAL")
        return self.user_json(self.users[name])

    @locked
    def add_repo(self, path: str) -> JSON:
        project, slug = path.split("/", 1)
        key = path.lower()
        if key not in self.repos:
            self.repos[key] = Repo(self._next("repo", 1), project, slug)
        return self.repo_json(self.repos[key])

    @locked
    def forbid(self, user: str, repo: str) -> None:
        """`user` may no longer read `repo` (Bitbucket then answers 401, not 403)."""
        self.forbidden.add((user, self.find_repo(*repo.split("/", 1)).path))

    def _repo(self, path: str) -> Repo:
        return self.find_repo(*path.split("/", 1))

    def _base(self, repo: Repo, branch: str, files: Files, author: User) -> str:
        tip = repo.branches.get(branch)
        tree = dict(repo.commits[tip].tree) if tip else {}
        tree.update({k: old for k, (old, _) in files.items() if old != ""})
        sha = self._commit(repo, tree, f"Prepare {branch}", author, [tip] if tip else [])
        repo.branches[branch] = sha
        return sha

    @locked
    def add_pr(self, repo: str, *, title: str, author: str, description: str = "",
               source: str = "feature", target: str = "main", files: Files | None = None,
               created_at: datetime | None = None) -> int:
        self.add_repo(repo)
        r, user, files = self._repo(repo), self.user(author), files or {}
        base = self._base(r, target, files, user)
        tree = {**r.commits[base].tree, **{k: new for k, (_, new) in files.items()}}
        head = self._commit(r, {k: v for k, v in tree.items() if v != ""}, title, user, [base])
        r.branches[source] = head
        at = self.now(created_at)
        pr = PullRequest(r.next_pr, r, title, description, user, at, at, source, target, base,
                         [head])
        r.prs[pr.id] = pr
        r.next_pr += 1
        self._activity(pr, user, "OPENED", when=at)
        return pr.id

    @locked
    def push(self, repo: str, pr_id: int, *, files: Files, message: str = "update",
             force: bool = False) -> str:
        """A new commit on the source branch (a RESCOPED activity); `force` rebases."""
        pr = self.find_pr(self._repo(repo), pr_id)
        r = pr.repo
        if force:
            pr.base_sha = self._base(r, pr.target, files, pr.author)
            parent, tree = pr.base_sha, dict(r.commits[pr.base_sha].tree)
        else:
            parent, tree = pr.head_sha, dict(r.commits[pr.head_sha].tree)
        tree.update({k: new for k, (_, new) in files.items()})
        sha = self._commit(r, {k: v for k, v in tree.items() if v != ""}, message, pr.author,
                           [parent])
        pr.commits = [sha] if force else [*pr.commits, sha]
        r.branches[pr.source] = sha
        self._activity(pr, pr.author, "RESCOPED")
        return sha

    @locked
    def set_state(self, repo: str, pr_id: int, state: str) -> None:
        """OPEN, MERGED or DECLINED."""
        if state not in {"OPEN", "MERGED", "DECLINED"}:
            raise ValueError(state)
        pr = self.find_pr(self._repo(repo), pr_id)
        pr.state, pr.version = state, pr.version + 1
        self._activity(pr, pr.author, {"OPEN": "REOPENED"}.get(state, state))

    # ---- comments, reactions, reviews ----------------------------------------------------------
    @locked
    def add_comment(self, repo: str, pr_id: int, *, author: str, text: str,
                    parent: int | None = None, path: str | None = None, line: int | None = None,
                    line_type: str = "ADDED", file_type: str = "TO",
                    created_at: datetime | None = None, multiline: object = None) -> JSON:
        """A general comment, a reply (`parent`), or an inline comment on `path`/`line` of
        the pull request's current diff (`lineType`/`fileType` as Bitbucket's anchors),
        on the lines from `multiline` (`multilineMarker {startLine, startLineType}`) to
        `line`, or on the whole file (`path` and no line)."""
        pr = self.find_pr(self._repo(repo), pr_id)
        user, at = self.user(author), self.now(created_at)
        if not text.strip():
            raise BitbucketError(400, "Please enter a non-empty value", "com.atlassian."
                                 "bitbucket.validation.ArgumentValidationException")
        above = self.find_comment(pr, parent) if parent is not None else None
        anchor = None
        if path is not None and above is None:
            anchor = {"fromHash": pr.base_sha, "toHash": pr.head_sha, "path": path,
                      "srcPath": path, "diffType": "EFFECTIVE", "orphaned": False}
            if line is not None:
                anchor.update({"line": line, "lineType": line_type, "fileType": file_type})
            if multiline is not None:
                anchor["multilineMarker"] = _marker(multiline, line)
        c = Comment(self._next("comment", 1), pr, user, text, at, at, above, anchor)
        (above.replies if above is not None else pr.comments).append(c)
        self._activity(pr, user, "COMMENTED", c, "REPLIED" if above else "ADDED", at)
        return self.comment_json(c)

    @locked
    def edit_comment(self, repo: str, pr_id: int, comment_id: int, text: str, *,
                     version: int | None = None) -> JSON:
        pr = self.find_pr(self._repo(repo), pr_id)
        c = self.find_comment(pr, comment_id)
        self._check_version(c, version)
        c.text, c.version, c.updated = text, c.version + 1, self.now()
        self._activity(pr, c.author, "COMMENTED", c, "EDITED")
        return self.comment_json(c)

    def _check_version(self, c: Comment, version: int | None) -> None:
        if version is not None and version != c.version:
            raise BitbucketError(409, f"You are attempting to modify a comment based on out-of-"
                                 f"date information (version {version}, current {c.version})",
                                 "com.atlassian.bitbucket.comment.CommentOutOfDateException")

    @locked
    def delete_comment(self, repo: str, pr_id: int, comment_id: int, *,
                       version: int | None = None) -> None:
        pr = self.find_pr(self._repo(repo), pr_id)
        c = self.find_comment(pr, comment_id)
        self._check_version(c, version)
        if c.replies:
            raise BitbucketError(409, "This comment has replies which must be deleted first.",
                                 "com.atlassian.bitbucket.comment.CommentDeletionException")
        copy = self.comment_json(c)
        (c.parent.replies if c.parent else pr.comments).remove(c)
        pr.activities = [a for a in pr.activities if a.comment is not c]
        self._activity(pr, c.author, "COMMENTED", None, "DELETED")
        pr.activities[-1].deleted_copy = copy

    @locked
    def resolve_thread(self, repo: str, pr_id: int, comment_id: int, resolved: bool, *,
                       user: str, version: int | None = None) -> JSON:
        pr = self.find_pr(self._repo(repo), pr_id)
        c = self.find_comment(pr, comment_id)
        self._check_version(c, version)
        if c.parent is not None:
            raise BitbucketError(400, "Only a root comment's thread can be resolved.")
        c.thread_resolved, c.version = resolved, c.version + 1
        c.thread_resolver = self.user(user) if resolved else None
        c.thread_resolved_at = self.now() if resolved else None
        pr.updated = max(pr.updated, self.now())
        return self.comment_json(c)

    @locked
    def react(self, repo: str, pr_id: int, comment_id: int, *, user: str,
              emoticon: str) -> JSON:
        """Add a reaction (a second identical one changes nothing)."""
        pr = self.find_pr(self._repo(repo), pr_id)
        c, who = self.find_comment(pr, comment_id), self.user(user)
        if emoticon not in self.emoticons:
            # The picker's names only: anything else (another name, an emoji character) is
            # a 400 (https://stackoverflow.com/q/77370498). The words are the fake's own.
            raise BitbucketError(400, f"'{emoticon}' is not a supported emoticon.",
                                 "com.atlassian.bitbucket.validation.ArgumentValidationException")
        users = c.reactions.setdefault(emoticon, [])
        if who not in users:
            users.append(who)
            self.reacted_at[(c.id, emoticon, who.name)] = self.now()
        return self.reaction_json(c, who, emoticon)

    @locked
    def unreact(self, repo: str, pr_id: int, comment_id: int, *, user: str,
                emoticon: str) -> None:
        c = self.find_comment(self.find_pr(self._repo(repo), pr_id), comment_id)
        who = self.user(user)
        c.reactions[emoticon] = [u for u in c.reactions.get(emoticon, []) if u is not who]

    @locked
    def reactions_on(self, repo: str, pr_id: int, comment_id: int) -> list[tuple[str, str]]:
        """(emoticon, user name) of every reaction on a comment (for assertions)."""
        c = self.find_comment(self.find_pr(self._repo(repo), pr_id), comment_id)
        return [(name, u.name) for name, users in c.reactions.items() for u in users]

    @locked
    def set_status(self, repo: str, pr_id: int, *, user: str, status: str) -> JSON:
        """A participant's review status: APPROVED, NEEDS_WORK or UNAPPROVED."""
        pr = self.find_pr(self._repo(repo), pr_id)
        who = self.user(user)
        if status not in ("APPROVED", "NEEDS_WORK", "UNAPPROVED"):
            raise BitbucketError(400, f"{status} is not a valid participant status")
        if who is pr.author:
            raise BitbucketError(400, "The author of a pull request cannot review it.",
                                 "com.atlassian.bitbucket.pull.InvalidPullRequestReviewer"
                                 "Exception")
        if pr.state != "OPEN":
            raise BitbucketError(409, "The pull request is not open.")
        previous = pr.statuses.get(who.name, "UNAPPROVED")
        pr.statuses[who.name] = status
        if status != previous:
            action = {"APPROVED": "APPROVED", "NEEDS_WORK": "REVIEWED"}.get(status, "UNAPPROVED")
            self._activity(pr, who, action)
        return {"user": self.user_json(who), "role": "PARTICIPANT",
                "approved": status == "APPROVED", "status": status,
                "lastReviewedCommit": pr.head_sha}

    @locked
    def add_reviewer(self, repo: str, pr_id: int, user: str, *, by: str | None = None) -> None:
        """Ask someone to review (as `by`, the author when None): an `UPDATED` activity (its
        `addedReviewers`), which moves the pull request's `updatedDate`."""
        pr, who = self.find_pr(self._repo(repo), pr_id), self.user(user)
        actor = self.user(by) if by is not None else pr.author
        if who is pr.author:
            raise BitbucketError(400, "The author of a pull request cannot review it.",
                                 "com.atlassian.bitbucket.pull.InvalidPullRequestReviewer"
                                 "Exception")
        if who.name not in pr.reviewers:
            pr.reviewers.append(who.name)
            self._activity(pr, actor, "UPDATED")

    @locked
    def remove_reviewer(self, repo: str, pr_id: int, user: str, *, by: str | None = None
                        ) -> None:
        """Take someone off the reviewers: an `UPDATED` activity (its `removedReviewers`),
        which moves `updatedDate`; who took part stays a PARTICIPANT (`pr_json`)."""
        pr, who = self.find_pr(self._repo(repo), pr_id), self.user(user)
        if who.name in pr.reviewers:
            pr.reviewers.remove(who.name)
            self._activity(pr, self.user(by) if by is not None else pr.author, "UPDATED")

    @locked
    def involving(self, user: User, role: str | None, state: str) -> list[PullRequest]:
        """The dashboard's pull requests of `user` (any role when None), in `state` (any
        when ALL), of the repositories it may read, most recently updated first."""
        found = [p for r in self.repos.values() if (user.name, r.path) not in self.forbidden
                 for p in r.prs.values()
                 if (state == "ALL" or p.state == state)
                 and (found_role := self.role_of(p, user)) is not None
                 and (role is None or found_role == role)]
        return sorted(found, key=lambda p: (p.updated, p.id), reverse=True)

    @locked
    def status_of(self, repo: str, pr_id: int, user: str) -> str:
        return self.find_pr(self._repo(repo), pr_id).statuses.get(user, "UNAPPROVED")

    @locked
    def comments_by(self, name: str) -> list[JSON]:
        """Every comment `name` wrote, oldest first (for assertions)."""
        found = [c for r in self.repos.values() for pr in r.prs.values()
                 for c in pr.all_comments() if c.author.name == name]
        return [self.comment_json(c) for c in sorted(found, key=lambda c: c.id)]

    @locked
    def thread_of(self, repo: str, pr_id: int, comment_id: int) -> list[JSON]:
        """The comments of the thread `comment_id` is in, root first (for assertions)."""
        pr = self.find_pr(self._repo(repo), pr_id)
        root = self.find_comment(pr, comment_id).root
        out, stack = [], [root]
        while stack:
            c = stack.pop()
            out.append(c)
            stack += reversed(c.replies)
        return [self.comment_json(c) for c in sorted(out, key=lambda c: c.id)]

    @locked
    def too_many_requests(self, method: str, path_regex: str, *, retry_after: int = 1,
                          times: int = 1) -> None:
        """Bitbucket Data Center's rate limiter: 429 with Retry-After (seconds)."""
        body = ('{"errors":[{"context":null,"message":"You have been rate limited. Please '
                'wait before making further requests.","exceptionName":null}]}')
        self.inject_fault(method, path_regex, status=429, body=body, times=times,
                          headers={"Retry-After": str(retry_after)})


def _marker(raw: object, line: int | None) -> JSON:
    """A range's first line: before `line` (the anchor's own, its last), of a known type."""
    bad = BitbucketError(400, "anchor.multilineMarker: the start must be a line before the "
                         "anchor's line", "com.atlassian.bitbucket.validation."
                         "ArgumentValidationException")
    if not isinstance(raw, dict) or line is None:
        raise bad
    start, kind = raw.get("startLine"), raw.get("startLineType")
    if isinstance(start, bool) or not isinstance(start, int) or not 1 <= start < line or \
            kind not in ("ADDED", "REMOVED", "CONTEXT"):
        raise bad
    return {"startLine": start, "startLineType": kind}
