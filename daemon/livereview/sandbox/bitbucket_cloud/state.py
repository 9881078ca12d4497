"""In-memory state of the fake Bitbucket Cloud: setup, mutations, faults, quota, request log.

Behaviour follows Bitbucket Cloud's REST 2.0 reference (model.py); JSON in
payloads.py, routes in routes.py. Every public method takes
the single re-entrant lock, so the HTTP threads and a test may share it.

Modelled where the reference is silent, and said so here: a pull request's `updated_on`
moves with every comment written, edited or deleted (so a listing by `updated_on` sees
them); an inline comment becomes `outdated` when a push changes the text of its line. Not
modelled: permissions beyond the credential's scopes and repos, tasks, drafts, forks,
merging.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from livereview.sandbox.bitbucket_cloud.model import (
    ALL_CLASSIC,
    ALL_SCOPED,
    JSON,
    Account,
    BitbucketError,
    Comment,
    Commit,
    Credential,
    Files,
    Inline,
    Participant,
    PullRequest,
    Repo,
    Update,
    braced,
    line_of,
)
from livereview.sandbox.bitbucket_cloud.payloads import BitbucketCloudPayloads
from livereview.sandbox.bitbucket_cloud.traffic import BitbucketCloudTraffic
from livereview.sandbox.gitlab.model import sha1
from livereview.sandbox.loopback import Fault, locked


class FakeBitbucketCloud(BitbucketCloudPayloads, BitbucketCloudTraffic):
    """A small Bitbucket Cloud: accounts, credentials, repos, pull requests, comments."""

    def __init__(self, *, token: str = "bbcloud-fake-api-token",  # noqa: S107 - a fake's
                 bot_login: str = "livereview",
                 clock: Callable[[], datetime] | None = None,
                 rate_limit_per_hour: int = 1000) -> None:
        self.lock = threading.RLock()
        self._clock = clock or (lambda: datetime.now(UTC))
        self.api_url = "https://api.bitbucket.org/2.0"  # the server sets its own on start
        self.web_url = "https://bitbucket.org"
        self.bot_login = bot_login
        self.rate_limit_per_hour = rate_limit_per_hour
        self.accounts: dict[str, Account] = {}
        self.credentials: dict[str, Credential] = {}
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self._faults: list[Fault] = []
        self._used: dict[str, deque[datetime]] = {}
        self._seq: dict[str, int] = {}
        self.add_user(bot_login, "LiveReview Bot")
        self.add_api_token(bot_login, token)

    # ---- helpers (callers hold the lock) -------------------------------------------------
    def now(self, when: datetime | None = None) -> datetime:
        dt = when or self._clock()
        return dt if dt.tzinfo else dt.replace(tzinfo=UTC)

    def _next(self, kind: str, start: int) -> int:
        self._seq[kind] = self._seq.get(kind, start - 1) + 1
        return self._seq[kind]

    def _commit(self, repo: Repo, tree: dict[str, str], message: str, author: Account,
                parents: list[str]) -> str:
        sha = sha1("commit", repo.full_name, self._next("sha", 1), message)
        repo.commits[sha] = Commit(sha, {k: v for k, v in tree.items() if v != ""}, message,
                                   author, self.now(), parents)
        return sha

    def _touch(self, pr: PullRequest, when: datetime) -> None:
        pr.updated_on = max(pr.updated_on, when)

    # ---- setup API (tests and drivers) -----------------------------------------------------
    @locked
    def add_user(self, name: str, display_name: str | None = None) -> Account:
        """A person's account; `name` is its nickname (what the UI shows, not unique)."""
        key = name.lower()
        if key not in self.accounts:
            number = self._next("account", 100)
            self.accounts[key] = Account(braced(f"user:{name}:{number}"),
                                         f"557058:{sha1('account', name, number)[:36]}",
                                         name, display_name or name.title(), "user", self.now())
        return self.accounts[key]

    @locked
    def add_impostor(self, name: str) -> Account:
        """Another person whose nickname is `name` too (Bitbucket nicknames are not unique);
        it is addressed as `name#2` in this fake's setup methods."""
        number = self._next("account", 100)
        account = Account(braced(f"user:{name}:{number}"),
                          f"557058:{sha1('account', name, number)[:36]}", name,
                          name.title(), "user", self.now())
        self.accounts[f"{name.lower()}#2"] = account
        return account

    @locked
    def add_api_token(self, login: str, secret: str, *,
                      scopes: tuple[str, ...] = ALL_SCOPED) -> Credential:
        """An Atlassian API token of the account `login` (Basic auth with that login)."""
        credential = Credential(secret, self.account(login), "api_token", scopes, login=login)
        self.credentials[secret] = credential
        return credential

    @locked
    def add_access_token(self, secret: str, name: str, *, kind: str = "workspace_access_token",
                         scopes: tuple[str, ...] = ALL_CLASSIC,
                         repos: tuple[str, ...] | None = None) -> Account:
        """A repository, project or workspace access token: a Bearer secret acting as its
        own app user, shown under the token's `name`."""
        number = self._next("account", 100)
        bot = Account(braced(f"app:{name}:{number}"), f"712020:{sha1('app', name)[:36]}",
                      name, name, "app_user", self.now(), kind=kind.replace("repo_", "repository_"))
        self.accounts.setdefault(name.lower(), bot)
        self.credentials[secret] = Credential(
            secret, bot, kind, scopes,
            repos=frozenset(r.lower() for r in repos) if repos is not None else None)
        return bot

    @locked
    def add_repo(self, full_name: str) -> Repo:
        key = full_name.lower()
        if key not in self.repos:
            workspace, slug = full_name.split("/", 1)
            self.repos[key] = Repo(workspace, slug, braced(f"repo:{key}"), self.now())
        return self.repos[key]

    def _base(self, repo: Repo, branch: str, files: Files, author: Account) -> str:
        """A commit on `branch` holding the old side of `files`."""
        tip = repo.branches.get(branch)
        tree = dict(repo.commits[tip].tree) if tip else {}
        tree.update({k: old for k, (old, _) in files.items()})
        sha = self._commit(repo, tree, f"Prepare {branch}", author, [tip] if tip else [])
        repo.branches[branch] = sha
        return sha

    @locked
    def add_pr(self, repo: str, *, title: str, description: str = "", author: str,
               files: Files | None = None, source: str = "feature",
               destination: str = "main") -> int:
        r, who, files = self.add_repo(repo), self.account(author), files or {}
        base = self._base(r, destination, files, who)
        tree = {**r.commits[base].tree, **{k: new for k, (_, new) in files.items()}}
        head = self._commit(r, tree, title, who, [base])
        source = f"{source}-{r.next_pr}" if source in r.branches else source
        r.branches[source] = head
        now = self.now()
        pr = PullRequest(r.next_pr, r, title, description, who, now, now, source, destination,
                         [head])
        pr.updates.append(Update(now, head, base, who, "OPEN", self._next("event", 1)))
        r.prs[pr.id] = pr
        r.next_pr += 1
        return pr.id

    @locked
    def push(self, repo: str, number: int, *, files: Files, message: str = "update",
             force: bool = False) -> str:
        """A new head commit; `force` rebases onto a new destination commit."""
        r = self.repos[repo.lower()]
        pr = self.find_pr(r, number)
        if force:
            base = self._base(r, pr.destination_branch, files, pr.author)
            tree = {**r.commits[base].tree,
                    **{p: t for p, t in r.commits[pr.head].tree.items()
                       if p not in r.commits[base].tree}}
            parent = base
        else:
            parent, tree = pr.head, dict(r.commits[pr.head].tree)
        tree.update({k: new for k, (_, new) in files.items()})
        sha = self._commit(r, tree, message, pr.author, [parent])
        pr.commits = [sha] if force else [*pr.commits, sha]
        r.branches[pr.source_branch] = sha
        now = self.now()
        pr.updates.append(Update(now, sha, pr.destination, pr.author, pr.state,
                                 self._next("event", 1)))
        self._touch(pr, now)
        new, old = r.commits[sha].tree, r.commits[pr.destination].tree
        for c in pr.comments:
            if c.inline is not None and not c.inline.outdated and (
                    c.inline.to, c.inline.from_) != (None, None):  # a file comment stays
                now_reads = line_of(new, c.inline.path, c.inline.to, c.inline.from_, old)
                c.inline.outdated = now_reads != c.inline.line_text
        return sha

    @locked
    def set_state(self, repo: str, number: int, state: str) -> None:
        """OPEN, MERGED, DECLINED or SUPERSEDED."""
        if state not in ("OPEN", "MERGED", "DECLINED", "SUPERSEDED"):
            raise ValueError(state)
        pr = self.find_pr(self.repos[repo.lower()], number)
        pr.state = state
        self._touch(pr, self.now())

    # ---- comments and verdicts ---------------------------------------------------------------
    def _pr(self, repo: str, number: int) -> PullRequest:
        r = self.repos.get(repo.lower())
        if r is None:
            raise BitbucketError(404, f"Repository {repo} not found")
        return self.find_pr(r, number)

    @locked
    def set_reviewers(self, repo: str, number: int, names: list[str]) -> None:
        """PUT …/pullrequests/:id with `reviewers` (https://developer.atlassian.com/cloud/
        bitbucket/rest/api-group-pullrequests/#api-repositories-workspace-repo-slug-
        pullrequests-pull-request-id-put): the PR's `reviewers` become exactly these, each a
        participant with role REVIEWER; one taken off stays a PARTICIPANT if they took part
        (commented, approved), else leaves `participants`; updated_on moves."""
        pr = self._pr(repo, number)
        wanted = [self.accounts[name.lower()] for name in names]
        for p in list(pr.participants):
            if p.role == "REVIEWER" and p.user not in wanted:
                if p.participated_on is None and p.state is None:
                    pr.participants.remove(p)
                else:
                    p.role = "PARTICIPANT"
        for who in wanted:
            found = next((p for p in pr.participants if p.user is who), None)
            if found is None:
                pr.participants.append(Participant(who, "REVIEWER"))
            else:
                found.role = "REVIEWER"
        self._touch(pr, self.now())

    def _participate(self, pr: PullRequest, who: Account, when: datetime) -> Participant:
        found = next((p for p in pr.participants if p.user is who), None)
        if found is None:
            found = Participant(who, "PARTICIPANT")
            pr.participants.append(found)
        found.participated_on = when
        return found

    @locked
    def add_comment(self, repo: str, number: int, *, author: str, body: str,
                    parent: int | None = None, inline: dict[str, Any] | None = None,
                    created_at: datetime | None = None) -> JSON:
        """A comment; a reply names its `parent`; `inline` is {"path", "to"} or
        {"path", "from"} (a line of the new or the old file). 400 for a line the file does
        not have, as Bitbucket refuses an anchor it cannot place."""
        pr, who, when = self._pr(repo, number), self.account(author), self.now(created_at)
        above = self.find_comment(pr, parent) if parent is not None else None
        # A reply sits where its thread does: it carries the thread's `inline`.
        anchor = above.inline if above is not None else None
        if inline is not None and above is None:
            anchor = self._inline(pr, inline)
        c = Comment(self._next("comment", 700_000_000), pr, who, body, when, when, above,
                    anchor, seq=self._next("event", 1))
        pr.comments.append(c)
        self._participate(pr, who, when)
        self._touch(pr, when)
        return self.comment_json(c)

    def _inline(self, pr: PullRequest, inline: dict[str, Any]) -> Inline:
        path = inline.get("path")
        to, from_ = inline.get("to"), inline.get("from")
        new, old = pr.repo.commits[pr.head].tree, pr.repo.commits[pr.destination].tree
        if not isinstance(path, str) or path not in set(new) | set(old):
            raise BitbucketError(400, "Invalid inline comment: no such file in the pull request")
        for value in (to, from_):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise BitbucketError(400, "Invalid inline comment: a line is a number")
        text = line_of(new, path, to, from_, old) if (to, from_) != (None, None) else ""
        if text is None:
            raise BitbucketError(400, f"Invalid inline comment: {path} has no such line")
        return Inline(path, to, from_ if to is None else None, text)

    @locked
    def edit_comment(self, repo: str, number: int, comment_id: int, body: str) -> JSON:
        pr = self._pr(repo, number)
        c = self.find_comment(pr, comment_id)
        c.raw, c.updated_on = body, self.now()
        self._touch(pr, c.updated_on)
        return self.comment_json(c)

    @locked
    def delete_comment(self, repo: str, number: int, comment_id: int) -> None:
        """Deleted comments stay in the list, `deleted: true` and without content."""
        pr = self._pr(repo, number)
        c = self.find_comment(pr, comment_id)
        c.deleted, c.updated_on = True, self.now()
        self._touch(pr, c.updated_on)

    @locked
    def resolve_comment(self, repo: str, number: int, comment_id: int, *, user: str,
                        resolved: bool = True) -> JSON | None:
        """The rules of POST/DELETE …/comments/{id}/resolve: a top-level comment on the diff;
        409 if already resolved, 404 when reopening what is not resolved."""
        pr = self._pr(repo, number)
        c = self.find_comment(pr, comment_id)
        if c.parent is not None or (resolved and c.inline is None):
            raise BitbucketError(403, "Only top-level comments on the diff can be resolved")
        if resolved and c.resolution is not None:
            raise BitbucketError(409, "Comment already resolved")
        if not resolved and c.resolution is None:
            raise BitbucketError(404, "Comment is not resolved")
        c.resolution = (self.account(user), self.now()) if resolved else None
        self._touch(pr, self.now())
        return self.resolution_json(c) if resolved else None

    @locked
    def verdict(self, repo: str, number: int, *, user: str, state: str | None,
                withdraw: str | None = None) -> JSON:
        """approve (`approved`), request changes (`changes_requested`) or withdraw one
        (None, `withdraw` naming which). Bitbucket answers 409 to the same verdict twice and
        404 to withdrawing one not given (https://github.com/hirakiuc/tinybucket/pull/75)."""
        pr, who, when = self._pr(repo, number), self.account(user), self.now()
        if pr.state != "OPEN":
            raise BitbucketError(400, "Pull request is not open")
        participant = self._participate(pr, who, when)
        if state is not None and participant.state == state:
            raise BitbucketError(409, "You already gave this verdict on the pull request.")
        if state is None and withdraw is not None and participant.state != withdraw:
            raise BitbucketError(404, "No such verdict to withdraw.")
        participant.state = state
        self._touch(pr, when)
        return self.participant_json(participant)

    # ---- assertions ------------------------------------------------------------------------
    @locked
    def comments_by(self, name: str) -> list[JSON]:
        """Every comment `name` wrote (not deleted), oldest first."""
        who = self.account(name)
        found = [c for r in self.repos.values() for pr in r.prs.values() for c in pr.comments
                 if c.user is who and not c.deleted]
        return [self.comment_json(c) for c in sorted(found, key=lambda c: c.id)]

    @locked
    def comments_by_thread(self, repo: str, number: int, root: int) -> list[JSON]:
        """The top-level comment `root` and every reply below it (not deleted)."""
        def top(c: Comment) -> Comment:
            return top(c.parent) if c.parent is not None else c
        pr = self._pr(repo, number)
        return [self.comment_json(c) for c in pr.comments
                if top(c).id == root and not c.deleted]

    @locked
    def participant_state(self, repo: str, number: int, name: str) -> str | None:
        pr, who = self._pr(repo, number), self.account(name)
        return next((p.state for p in pr.participants if p.user is who), None)

    @locked
    def is_resolved(self, repo: str, number: int, comment_id: int) -> bool:
        return self.find_comment(self._pr(repo, number), comment_id).resolution is not None
