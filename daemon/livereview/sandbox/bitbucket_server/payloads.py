"""The read side of the fake Bitbucket Data Center: lookups, git queries and the JSON it
answers with.

`BitbucketPayloads` is a base class of `FakeBitbucketDC` (state.py), which
owns the state and the lock; callers of these methods hold it. Keys follow the schemas of
the REST reference (RestApplicationUser, RestPullRequest, RestPullRequestParticipant,
RestComment with `properties.reactions`, RestPullRequestActivity, RestCommit, RestRepository,
RestApplicationProperties); raw diffs name the sides `src://` and `dst://` as Bitbucket's do.
"""

from __future__ import annotations

import difflib
import threading
from typing import Any

from livereview.sandbox.bitbucket_server.model import (
    JSON,
    Activity,
    BitbucketError,
    Comment,
    Commit,
    PullRequest,
    Repo,
    Tree,
    User,
    millis,
    no_such,
)


def page(values: list[Any], query: dict[str, str], default_limit: int = 25,
         max_limit: int = 1000) -> JSON:
    """A page of a paged list: `start`/`limit` in, `isLastPage`/`nextPageStart` out."""
    try:
        start = max(0, int(query.get("start") or 0))
        limit = min(max_limit, max(1, int(query.get("limit") or default_limit)))
    except ValueError:
        raise BitbucketError(400, "start and limit must be numbers") from None
    chunk = values[start:start + limit]
    last = start + limit >= len(values)
    out: JSON = {"size": len(chunk), "limit": limit, "isLastPage": last, "values": chunk,
                 "start": start}
    if not last:
        out["nextPageStart"] = start + limit
    return out


def raw_diff(old: Tree, new: Tree, context: int = 3) -> str:
    """`git diff` between two trees with Bitbucket's `src://` / `dst://` prefixes."""
    out = []
    for path in sorted(set(old) | set(new)):
        before, after = old.get(path), new.get(path)
        if before == after:
            continue
        lines = list(difflib.unified_diff((before or "").splitlines(True),
                                          (after or "").splitlines(True), n=context))[2:]
        body = "".join(x if x.endswith("\n") else x + "\n\\ No newline at end of file\n"
                       for x in lines)
        source = f"src://{path}" if before is not None else "/dev/null"
        target = f"dst://{path}" if after is not None else "/dev/null"
        out.append(f"diff --git src://{path} dst://{path}\n--- {source}\n+++ {target}\n{body}")
    return "".join(out)


class BitbucketPayloads:
    """Lookups, git queries and payload builders of `FakeBitbucketDC`."""

    lock: threading.RLock
    base_url: str
    users: dict[str, User]
    repos: dict[str, Repo]
    reactions_enabled: bool

    # ---- lookups -------------------------------------------------------------------------
    def find_repo(self, project: str, slug: str) -> Repo:
        repo = self.repos.get(f"{project}/{slug}".lower())
        if repo is None:
            raise no_such("repository.NoSuchRepositoryException",
                          f"Repository {project}/{slug} does not exist.")
        return repo

    def find_pr(self, repo: Repo, pr_id: int) -> PullRequest:
        pr = repo.prs.get(pr_id)
        if pr is None:
            raise no_such("pull.NoSuchPullRequestException",
                          f"No pull request exists with ID {pr_id} for this repository "
                          f"{repo.path}")
        return pr

    def find_comment(self, pr: PullRequest, comment_id: int) -> Comment:
        for c in pr.all_comments():
            if c.id == comment_id:
                return c
        raise no_such("comment.NoSuchCommentException",
                      f"No comment with id {comment_id} exists.")

    def tree_at(self, repo: Repo, ref: str) -> Tree:
        sha = repo.branches.get(ref.removeprefix("refs/heads/"), ref)
        found = repo.commits.get(sha)
        if found is None:
            raise no_such("commit.NoSuchCommitException", f"Commit '{ref}' does not exist.")
        return found.tree

    def pr_diff(self, pr: PullRequest, head: str | None = None) -> str:
        repo = pr.repo
        return raw_diff(repo.commits[pr.base_sha].tree, repo.commits[head or pr.head_sha].tree)

    # ---- JSON ----------------------------------------------------------------------------
    def user_json(self, user: User) -> JSON:
        return {"name": user.name, "emailAddress": f"{user.name}@example.com",
                "active": True, "displayName": user.display_name, "id": user.id,
                "slug": user.slug, "type": user.kind,
                "links": {"self": [{"href": f"{self.base_url}/users/{user.slug}"}]}}

    def repo_json(self, repo: Repo) -> JSON:
        return {"slug": repo.slug, "id": repo.id, "name": repo.slug, "hierarchyId": "a1b2c3",
                "scmId": "git", "state": "AVAILABLE", "statusMessage": "Available",
                "forkable": True, "public": False, "archived": False,
                "project": {"key": repo.project, "id": 1, "name": repo.project,
                            "public": False, "type": "NORMAL"},
                "links": {"self": [{"href": f"{self.base_url}/projects/{repo.project}/repos/"
                                            f"{repo.slug}/browse"}]}}

    def _ref(self, repo: Repo, branch: str, sha: str) -> JSON:
        return {"id": f"refs/heads/{branch}", "displayId": branch, "latestCommit": sha,
                "type": "BRANCH", "repository": self.repo_json(repo)}

    def _participant(self, user: User, role: str, status: str) -> JSON:
        return {"user": self.user_json(user), "role": role,
                "approved": status == "APPROVED", "status": status}

    def role_of(self, pr: PullRequest, user: User) -> str | None:
        """AUTHOR, REVIEWER, PARTICIPANT (someone who commented or reviewed without being
        asked) or None: who the dashboard lists a pull request for."""
        if user is pr.author:
            return "AUTHOR"
        if user.name in pr.reviewers:
            return "REVIEWER"
        if user.name in pr.statuses or any(c.author is user for c in pr.all_comments()):
            return "PARTICIPANT"
        return None

    def pr_json(self, pr: PullRequest) -> JSON:
        repo = pr.repo
        reviewers = [self._participant(self.users[name], "REVIEWER",
                                       pr.statuses.get(name, "UNAPPROVED"))
                     for name in pr.reviewers]
        others = {c.author.name for c in pr.all_comments()} | set(pr.statuses)
        participants = [self._participant(self.users[name], "PARTICIPANT",
                                          pr.statuses.get(name, "UNAPPROVED"))
                        for name in sorted(others - {pr.author.name, *pr.reviewers})]
        out: JSON = {
            "id": pr.id, "version": pr.version, "title": pr.title,
            "description": pr.description, "state": pr.state, "open": pr.state == "OPEN",
            "closed": pr.state != "OPEN", "draft": False, "locked": False,
            "createdDate": millis(pr.created), "updatedDate": millis(pr.updated),
            "fromRef": self._ref(repo, pr.source, pr.head_sha),
            "toRef": self._ref(repo, pr.target, pr.base_sha),
            "author": self._participant(pr.author, "AUTHOR", "UNAPPROVED"),
            "reviewers": reviewers, "participants": participants,
            "links": {"self": [{"href": f"{self.base_url}/projects/{repo.project}/repos/"
                                        f"{repo.slug}/pull-requests/{pr.id}"}]}}
        if not pr.description:
            del out["description"]  # Bitbucket leaves an empty description out
        return out

    def comment_json(self, c: Comment) -> JSON:
        out: JSON = {
            "properties": {"repositoryId": c.pr.repo.id}, "id": c.id, "version": c.version,
            "text": c.text, "author": self.user_json(c.author),
            "createdDate": millis(c.created), "updatedDate": millis(c.updated),
            "comments": [self.comment_json(r) for r in c.replies],
            "severity": "NORMAL", "state": "OPEN",
            "permittedOperations": {"editable": True, "transitionable": True,
                                    "deletable": not c.replies}}
        if self.reactions_enabled and c.reactions:
            out["properties"]["reactions"] = [
                {"emoticon": {"shortcut": name,
                              "url": f"{self.base_url}/s/emoticons/{name}.svg"},
                 "users": [self.user_json(u) for u in users]}
                for name, users in c.reactions.items() if users]
        if c.anchor is not None:
            out["anchor"] = c.anchor
            out["anchored"] = True
        if c.parent is None:
            out["threadResolved"] = c.thread_resolved
            if c.thread_resolved and c.thread_resolver and c.thread_resolved_at:
                out["threadResolver"] = self.user_json(c.thread_resolver)
                out["threadResolvedDate"] = millis(c.thread_resolved_at)
        return out

    def activity_json(self, a: Activity) -> JSON:
        out: JSON = {"id": a.id, "createdDate": millis(a.created),
                     "user": self.user_json(a.user), "action": a.action}
        if a.action == "COMMENTED":
            out["commentAction"] = a.comment_action
            if a.deleted_copy is not None:
                out["comment"] = a.deleted_copy
            elif a.comment is not None:
                out["comment"] = self.comment_json(a.comment)
                if a.comment.root.anchor is not None and a.comment.parent is None:
                    out["commentAnchor"] = a.comment.anchor
        return out

    def commit_json(self, c: Commit) -> JSON:
        person = {"name": c.author.name, "emailAddress": f"{c.author.name}@example.com"}
        return {"id": c.sha, "displayId": c.sha[:11], "message": c.message,
                "author": person, "authorTimestamp": millis(c.date),
                "committer": person, "committerTimestamp": millis(c.date),
                "parents": [{"id": p, "displayId": p[:11]} for p in c.parents]}

    def reaction_json(self, c: Comment, user: User, name: str) -> JSON:
        return {"comment": self.comment_json(c), "user": self.user_json(user),
                "emoticon": {"shortcut": name, "url": f"{self.base_url}/s/emoticons/{name}.svg"}}
