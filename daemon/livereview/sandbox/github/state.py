"""In-memory state of the fake GitHub: setup, mutations, faults, rate limits, the request log.

Behaviour follows GitHub's REST reference (see model.py). Lookups and payloads are in
payloads.py. Every public method takes the single re-entrant lock, so the HTTP
threads and a test may share it. What the fake does not model on purpose: permissions
beyond "the token is valid", drafts, multi-line comments, pending reviews, suggestions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime

from livereview.sandbox.github.file_comments import file_comment
from livereview.sandbox.github.model import (
    JSON,
    REACTIONS,
    Commit,
    Files,
    GitHubError,
    IssueComment,
    PullRequest,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    ReviewThread,
    User,
    check_start,
    invalid,
    locate,
    node_id,
    not_found,
)
from livereview.sandbox.github.notifications import GitHubNotifications
from livereview.sandbox.github.payloads import GitHubPayloads
from livereview.sandbox.github.traffic import GitHubTraffic
from livereview.sandbox.gitlab.model import sha1
from livereview.sandbox.loopback import Fault, locked

_REVIEW_COMMENT_DOCS = "https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request"


class FakeGitHub(GitHubPayloads, GitHubTraffic, GitHubNotifications):
    """A small GitHub: users, repos, pull requests, commits, comments, reviews, reactions."""

    def __init__(self, *, token: str = "ghp_fake-token",  # noqa: S107 - a fake's token
                 bot_login: str = "livereview",
                 clock: Callable[[], datetime] | None = None, rate_limit: int = 5000) -> None:
        self.lock = threading.RLock()
        self._clock = clock or (lambda: datetime.now(UTC))
        self.api_url = "https://api.github.com"  # the server sets its own URLs on start
        self.web_url = "https://github.com"
        self.bot_login = bot_login
        self.tokens: dict[str, str] = {token: bot_login}  # token -> login; add more freely
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.users: dict[str, User] = {}
        self.repos: dict[int, Repo] = {}
        self.nodes: dict[str, object] = {}  # GraphQL global ids
        self._faults: list[Fault] = []
        self._seq: dict[str, int] = {}
        self._compare_cache = {}
        # resource -> [limit, used, reset epoch]; a window starts at its first request
        self._limits: dict[str, list[int]] = {r: [rate_limit, 0, 0] for r in ("core", "graphql")}
        self._notifications_init()
        self.add_user(bot_login, "LiveReview Bot")

    # ---- helpers (callers hold the lock) -------------------------------------------------
    def now(self, when: datetime | None = None) -> datetime:
        dt = when or self._clock()
        dt = dt if dt.tzinfo else dt.replace(tzinfo=UTC)
        return dt.replace(microsecond=0)  # GitHub's timestamps have whole seconds

    def _next(self, kind: str, start: int = 1) -> int:
        self._seq[kind] = self._seq.get(kind, start - 1) + 1
        return self._seq[kind]

    def _user(self, login: str) -> User:
        if login not in self.users:
            self.add_user(login)
        return self.users[login]

    def _commit(self, repo: Repo, tree: dict[str, str], message: str, author: User,
                parents: list[str]) -> str:
        sha = sha1("commit", repo.full_name, self._next("sha"), message)
        repo.commits[sha] = Commit(sha, tree, message, author, self.now(), parents)
        return sha

    def _node(self, prefix: str, obj: object, number: int) -> None:
        self.nodes[node_id(prefix, number)] = obj

    # ---- setup API (used by tests and drivers) ---------------------------------------------
    @locked
    def add_user(self, login: str, name: str | None = None, *, bot: bool = False) -> JSON:
        """A user; `bot` (or a `name[bot]` login, as GitHub Apps act) is `type: "Bot"`."""
        if login not in self.users:
            kind = "Bot" if bot or login.endswith("[bot]") else "User"
            self.users[login] = User(self._next("user", 1000), login, name or login.title(),
                                     kind, self.now())
        return self.user_json(self.users[login], full=True)

    @locked
    def add_repo(self, full_name: str, *, private: bool = True) -> JSON:
        try:
            return self.repo_json(self.find_repo(full_name))
        except GitHubError:
            owner, name = full_name.split("/", 1)
            repo = Repo(self._next("repo", 500), self._user(owner), name, self.now(),
                        private=private)
            self.repos[repo.id] = repo
            return self.repo_json(repo)

    def _base(self, repo: Repo, branch: str, files: Files, author: User) -> str:
        """A commit on `branch` holding the old side of `files`."""
        tip = repo.branches.get(branch)
        tree = dict(repo.commits[tip].tree) if tip else {}
        tree.update({k: old for k, (old, _) in files.items() if old != ""})
        sha = self._commit(repo, tree, f"Prepare {branch}", author, [tip] if tip else [])
        repo.branches[branch] = sha
        return sha

    @locked
    def add_pr(self, repo: str, *, title: str, body: str = "", author: str,
               head: str = "feature", base: str = "main", files: Files | None = None) -> int:
        self.add_repo(repo)
        r, user, files = self.find_repo(repo), self._user(author), files or {}
        base_sha = self._base(r, base, files, user)
        tree = {**r.commits[base_sha].tree, **{k: new for k, (_, new) in files.items()}}
        head_sha = self._commit(r, {k: v for k, v in tree.items() if v != ""}, title, user,
                                [base_sha])
        r.branches[head] = head_sha
        now = self.now()
        pr = PullRequest(self._next("pull", 9000), r.next_number, r, title, body, user, now, now,
                         head_ref=head, base_ref=base, base_sha=base_sha, commits=[head_sha])
        r.issues[pr.number] = pr
        r.next_number += 1
        self._node("PR", pr, pr.id)
        return pr.number

    @locked
    def add_issue(self, repo: str, *, title: str, author: str, body: str = "") -> int:
        """A plain issue: its comments share the repo's issue-comment list with PRs'."""
        self.add_repo(repo)
        r, now = self.find_repo(repo), self.now()
        issue = PullRequest(self._next("pull", 9000), r.next_number, r, title, body,
                            self._user(author), now, now, is_pull=False)
        r.issues[issue.number] = issue
        r.next_number += 1
        return issue.number

    @locked
    def push(self, repo: str, number: int, *, files: Files, message: str = "update",
             force: bool = False) -> str:
        """A new commit on the head branch; `force` rebases onto a new base commit."""
        pr = self.find_issue(repo, number, pull=True)
        r = pr.repo
        if force:
            pr.base_sha = self._base(r, pr.base_ref, files, pr.user)
            parent, tree = pr.base_sha, dict(r.commits[pr.base_sha].tree)
            for path in set(r.commits[pr.head_sha].tree) - set(tree):
                tree[path] = r.commits[pr.head_sha].tree[path]
        else:
            parent, tree = pr.head_sha, dict(r.commits[pr.head_sha].tree)
        tree.update({k: new for k, (_, new) in files.items()})
        sha = self._commit(r, {k: v for k, v in tree.items() if v != ""}, message, pr.user,
                           [parent])
        pr.commits = [sha] if force else [*pr.commits, sha]
        r.branches[pr.head_ref] = sha
        pr.updated_at = max(pr.updated_at, self.now())
        self._carry_comments(pr)
        return sha

    def _carry_comments(self, pr: PullRequest) -> None:
        """After a push a comment moves to the new head if its hunk reads the same there,
        else it becomes outdated (`line` and `position` null), as GitHub shows it."""
        patches = {f.filename: f.patch for f in self.compare(pr.repo, pr.base_sha,
                                                             pr.head_sha)[1]}
        for c in pr.review_comments:
            if c.subject_type == "file" and c.path in patches:
                c.commit_id = pr.head_sha  # a file comment stays while its file is changed
                continue
            if c.line is None:
                continue
            found = locate(patches.get(c.path, ""), c.line, c.side)
            if found is not None and found[1] == c.diff_hunk:
                c.commit_id, c.position = pr.head_sha, found[0]
            else:
                c.line = c.position = c.start_line = None

    @locked
    def set_state(self, repo: str, number: int, state: str) -> None:
        """open, closed or merged (GitHub's `state` is then closed, with `merged_at`)."""
        if state not in {"open", "closed", "merged"}:
            raise ValueError(state)
        pr, now = self.find_issue(repo, number), self.now()
        pr.state = "open" if state == "open" else "closed"
        pr.closed_at = None if state == "open" else now
        pr.merged_at = now if state == "merged" else None
        pr.updated_at = max(pr.updated_at, now)

    # ---- comments, reviews, reactions --------------------------------------------------------
    @locked
    def add_issue_comment(self, repo: str, number: int, *, author: str, body: str,
                          created_at: datetime | None = None) -> JSON:
        """A comment on the PR's conversation tab (or on an issue); bumps its updated_at."""
        issue, when = self.find_issue(repo, number), self.now(created_at)
        c = IssueComment(self._next("comment", 1_000_000), issue, self._user(author), body,
                         when, when)
        participants = self._participants(issue)
        issue.comments.append(c)
        issue.updated_at = max(issue.updated_at, when)
        self._node("IC", c, c.id)
        body_json = self.issue_comment_json(c)
        self._notify_comment(issue, c.user, body, when, body_json["url"],
                             participants=participants)
        return body_json

    @staticmethod
    def _participants(issue: PullRequest) -> set[str]:
        """Who commented on the subject so far (GitHub notifies them: `comment`)."""
        return ({c.user.login for c in issue.comments}
                | {c.user.login for c in issue.review_comments}
                | {r.user.login for r in issue.reviews if r.body})

    @locked
    def request_review(self, repo: str, number: int, *, reviewer: str) -> None:
        """POST …/pulls/:n/requested_reviewers: `reviewer` joins `requested_reviewers` (again,
        after a review or a removal), gets a `review_requested` notification; bumps the PR."""
        pr, now, user = self.find_issue(repo, number, pull=True), self.now(), self._user(reviewer)
        if user not in pr.requested_reviewers:
            pr.requested_reviewers.append(user)
        pr.updated_at = max(pr.updated_at, now)
        self._touch(user, pr, "review_requested", now, None)

    @locked
    def remove_review_request(self, repo: str, number: int, *, reviewer: str) -> None:
        """DELETE …/pulls/:n/requested_reviewers: `reviewer` leaves the list; bumps the PR."""
        pr, user = self.find_issue(repo, number, pull=True), self._user(reviewer)
        if user in pr.requested_reviewers:
            pr.requested_reviewers.remove(user)
            pr.updated_at = max(pr.updated_at, self.now())

    def _review(self, pr: PullRequest, user: User, body: str, state: str) -> Review:
        review = Review(self._next("review", 70_000), pr, user, body, state, self.now(),
                        pr.head_sha)
        pr.reviews.append(review)
        # "Once a requested reviewer submits a review, they are no longer considered a
        # requested reviewer" (https://docs.github.com/en/rest/pulls/review-requests#get-
        # all-requested-reviewers-for-a-pull-request): asking again is a new request.
        if state != "PENDING" and user in pr.requested_reviewers:
            pr.requested_reviewers.remove(user)
        self._node("PRR", review, review.id)
        return review

    @locked
    def add_review(self, repo: str, number: int, *, author: str, body: str,
                   state: str = "COMMENTED") -> JSON:
        pr = self.find_issue(repo, number, pull=True)
        participants = self._participants(pr)
        review = self._review(pr, self._user(author), body, state)
        pr.updated_at = max(pr.updated_at, review.submitted_at)
        out = self.review_json(review)
        if body:
            self._notify_comment(pr, review.user, body, review.submitted_at,
                                 f"{self.api_url}/repos/{pr.repo.full_name}/pulls/"
                                 f"{pr.number}/reviews/{review.id}", participants=participants)
        return out

    @locked
    def add_review_comment(self, repo: str, number: int, *, author: str, body: str,
                           path: str, line: int, side: str = "RIGHT",
                           commit_id: str | None = None,
                           created_at: datetime | None = None,
                           start_line: int | None = None,
                           start_side: str | None = None) -> JSON:
        """A comment on a line of the diff (a single-comment review, as the REST API and
        "Add single comment" make it), or on the lines `start_line`..`line`; 422 when a
        line is not part of the diff, or a range's start is not before its end in the
        same hunk (https://docs.github.com/rest/pulls/comments#create-a-review-comment-
        for-a-pull-request: "start_line … the first line in the pull request diff that
        your multi-line comment applies to")."""
        pr = self.find_issue(repo, number, pull=True)
        commit = commit_id or pr.head_sha
        if commit not in pr.commits:
            raise invalid("PullRequestReviewComment", "commit_id", "commit_id is not part of "
                          "the pull request", _REVIEW_COMMENT_DOCS)
        if side not in ("LEFT", "RIGHT"):
            raise invalid("PullRequestReviewComment", "side", "side is not LEFT or RIGHT",
                          _REVIEW_COMMENT_DOCS)
        patches = {f.filename: f.patch for f in self.compare(pr.repo, pr.base_sha, commit)[1]}
        found = locate(patches.get(path, ""), line, side)
        if found is None:
            raise invalid("PullRequestReviewComment", "pull_request_review_thread.line",
                          "pull_request_review_thread.line must be part of the diff",
                          _REVIEW_COMMENT_DOCS)
        if start_line is not None:
            check_start(patches.get(path, ""), start_line, start_side or side, line, side,
                        found[1])
        user, when = self._user(author), self.now(created_at)
        review = self._review(pr, user, "", "COMMENTED")
        current = commit == pr.head_sha  # a comment on an older commit starts outdated
        c = ReviewComment(self._next("comment", 1_000_000), pr, review, user, body, path, side,
                          line if current else None, line, commit, commit, found[1],
                          found[0] if current else None, found[0], None, when, when,
                          start_line=start_line if current else None,
                          original_start_line=start_line,
                          start_side=(start_side or side) if start_line is not None else None)
        return self._file_comment(pr, c)

    @locked
    def add_file_comment(self, repo: str, number: int, *, author: str, body: str, path: str,
                         commit_id: str | None = None) -> JSON:
        """A comment on a whole file (`subject_type: file`); 422 off the diff."""
        return file_comment(self, self.find_issue(repo, number, pull=True), author, body,
                            path, commit_id)

    def _file_comment(self, pr: PullRequest, c: ReviewComment) -> JSON:
        participants = self._participants(pr)
        pr.review_comments.append(c)
        pr.updated_at = max(pr.updated_at, c.created_at)
        self._node("PRRC", c, c.id)
        if c.in_reply_to is None:
            thread = ReviewThread(self._next("thread", 40_000), c)
            pr.threads.append(thread)
            self._node("PRRT", thread, thread.id)
        out = self.review_comment_json(c)
        self._notify_comment(pr, c.user, c.body, c.created_at, out["url"],
                             participants=participants)
        return out

    @locked
    def reply_review_comment(self, repo: str, number: int, comment_id: int, *, author: str,
                             body: str, created_at: datetime | None = None) -> JSON:
        """POST …/pulls/{n}/comments/{id}/replies: `id` must be the thread's top-level
        comment ("Replies to replies are not supported"); anything else is 404."""
        pr = self.find_issue(repo, number, pull=True)
        root = next((c for c in pr.review_comments if c.id == comment_id), None)
        if root is None or root.in_reply_to is not None:
            raise not_found("https://docs.github.com/rest/pulls/comments#create-a-reply-for-a-review-comment")
        user, when = self._user(author), self.now(created_at)
        review = self._review(pr, user, "", "COMMENTED")
        c = ReviewComment(self._next("comment", 1_000_000), pr, review, user, body, root.path,
                          root.side, root.line, root.original_line, root.commit_id,
                          root.original_commit_id, root.diff_hunk, root.position,
                          root.original_position, root, when, when)
        return self._file_comment(pr, c)

    def _comment(self, repo: str, kind: str, comment_id: int) -> IssueComment | ReviewComment:
        if kind == "issue":
            return self.find_issue_comment(repo, comment_id)
        if kind == "review":
            return self.find_review_comment(repo, comment_id)
        raise ValueError(kind)

    @locked
    def edit_comment(self, repo: str, kind: str, comment_id: int, body: str) -> None:
        """Edit an issue or review comment. Only the comment's updated_at moves: the fake
        assumes GitHub does not bump the pull request for an edit, so an adapter has to find
        edits through the repo-wide comment lists — or its notifications: users the edit
        newly @mentions are notified (`mention`)."""
        c = self._comment(repo, kind, comment_id)
        before, c.body, c.updated_at = c.body, body, self.now()
        subject = c.issue if isinstance(c, IssueComment) else c.pr
        url = (self.issue_comment_json(c) if isinstance(c, IssueComment)
               else self.review_comment_json(c))["url"]
        self._notify_comment(subject, c.user, body, c.updated_at, url, before=before)

    @locked
    def delete_comment(self, repo: str, kind: str, comment_id: int) -> None:
        c = self._comment(repo, kind, comment_id)
        if isinstance(c, IssueComment):
            c.issue.comments.remove(c)
        else:
            c.pr.review_comments.remove(c)
            c.pr.threads = [t for t in c.pr.threads if t.root is not c]

    @locked
    def react(self, repo: str, kind: str, comment_id: int, *, user: str, content: str
              ) -> tuple[JSON, bool]:
        """Add a reaction; (reaction, created). An existing one is answered again (200)."""
        if content not in REACTIONS:
            raise invalid("Reaction", "content", f"content is not one of {', '.join(REACTIONS)}",
                          "https://docs.github.com/rest/reactions/reactions")
        c = self._comment(repo, kind, comment_id)
        return self._react(c.reactions, self._user(user), content)

    def _react(self, reactions: list[Reaction], who: User, content: str) -> tuple[JSON, bool]:
        existing = next((r for r in reactions if r.user is who and r.content == content), None)
        if existing is not None:
            return self.reaction_json(existing), False
        reaction = Reaction(self._next("reaction", 300_000), who, content, self.now())
        reactions.append(reaction)
        return self.reaction_json(reaction), True

    @locked
    def reactions_on(self, repo: str, kind: str, comment_id: int) -> list[tuple[str, str]]:
        """(content, login) of every reaction on a comment ("review-body" for a review)."""
        if kind == "review-body":
            found: list[Reaction] = next(
                r.reactions for pr in self.find_repo(repo).issues.values() for r in pr.reviews
                if r.id == comment_id)
        else:
            found = self._comment(repo, kind, comment_id).reactions
        return [(r.content, r.user.login) for r in found]

    @locked
    def resolve_thread(self, thread: ReviewThread, resolved: bool, *, user: str) -> None:
        thread.resolved = resolved
        thread.resolved_by = self._user(user) if resolved else None

    @locked
    def thread_of_comment(self, repo: str, comment_id: int) -> ReviewThread:
        c = self.find_review_comment(repo, comment_id)
        thread: ReviewThread = self.thread_of(c)
        return thread

    @locked
    def comments_by(self, login: str) -> list[JSON]:
        """Every issue and review comment `login` wrote, oldest first (for assertions)."""
        out: list[tuple[int, JSON]] = []
        for repo in self.repos.values():
            for issue in repo.issues.values():
                out += [(c.id, self.issue_comment_json(c)) for c in issue.comments
                        if c.user.login == login]
                out += [(c.id, self.review_comment_json(c)) for c in issue.review_comments
                        if c.user.login == login]
        return [json for _, json in sorted(out, key=lambda pair: pair[0])]
