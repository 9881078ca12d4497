"""The read side of the fake GitHub: lookups, git queries and the REST JSON it answers with.

`GitHubPayloads` is the base class of `FakeGitHub` (state.py), which owns the state
and the lock; callers of these methods hold it. Payload keys follow GitHub's REST reference
(the `simple-user`, `repository`, `pull-request`, `issue-comment`,
`pull-request-review-comment`, `pull-request-review`, `commit`, `diff-entry`, `reaction`
and `commit-comparison` schemas of github/rest-api-description).
"""

from __future__ import annotations

import base64
import hashlib
import threading
from datetime import datetime
from typing import Any

from livereview.sandbox.github.model import (
    JSON,
    REACTIONS,
    Commit,
    FileDiff,
    GitHubError,
    IssueComment,
    PullRequest,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    Tree,
    User,
    file_diffs,
    iso,
    node_id,
    not_found,
)


def _rollup(url: str, reactions: list[Reaction]) -> JSON:
    counts = {name: sum(r.content == name for r in reactions) for name in REACTIONS}
    return {"url": url, "total_count": len(reactions), **counts}


class GitHubPayloads:
    """Lookups, git queries and payload builders of `FakeGitHub`."""

    lock: threading.RLock
    api_url: str
    web_url: str
    users: dict[str, User]
    repos: dict[int, Repo]
    patch_limit_bytes = 1_000_000  # a file's patch past this is left out, as GitHub does
    _compare_cache: dict[tuple[str, str], list[FileDiff]]

    # ---- lookups -------------------------------------------------------------------------
    def find_repo(self, full_name: str) -> Repo:
        key = full_name.lower()
        for repo in self.repos.values():
            if repo.full_name.lower() == key or str(repo.id) == key:
                return repo
        raise not_found("https://docs.github.com/rest/repos/repos#get-a-repository")

    def find_issue(self, repo: str | Repo, number: int, *, pull: bool = False) -> PullRequest:
        r = repo if isinstance(repo, Repo) else self.find_repo(repo)
        found = r.issues.get(number)
        if found is None or (pull and not found.is_pull):
            raise not_found("https://docs.github.com/rest/pulls/pulls#get-a-pull-request")
        return found

    def find_issue_comment(self, repo: str, comment_id: int) -> IssueComment:
        for issue in self.find_repo(repo).issues.values():
            for c in issue.comments:
                if c.id == comment_id:
                    return c
        raise not_found("https://docs.github.com/rest/issues/comments#get-an-issue-comment")

    def find_review_comment(self, repo: str, comment_id: int) -> ReviewComment:
        for pr in self.find_repo(repo).issues.values():
            for c in pr.review_comments:
                if c.id == comment_id:
                    return c
        raise not_found("https://docs.github.com/rest/pulls/comments#get-a-review-comment")

    def find_review(self, pr: PullRequest, review_id: int) -> Review:
        review = next((r for r in pr.reviews if r.id == review_id), None)
        if review is None:
            raise not_found("https://docs.github.com/rest/pulls/reviews#get-a-review-for-a-pull-request")
        return review

    # ---- git ---------------------------------------------------------------------------------
    def _commit_of(self, repo: Repo, ref: str) -> Commit:
        sha = repo.branches.get(ref, ref)
        matches = [c for s, c in repo.commits.items() if s == sha or (len(sha) >= 7
                                                                     and s.startswith(sha))]
        if len(matches) != 1:
            raise not_found("https://docs.github.com/rest/commits/commits#get-a-commit")
        return matches[0]

    def _ancestors(self, repo: Repo, sha: str) -> list[str]:
        seen: list[str] = []
        todo = [sha]
        while todo:
            current = todo.pop(0)
            if current in seen or current not in repo.commits:
                continue
            seen.append(current)
            todo += repo.commits[current].parents
        return seen

    def merge_base(self, repo: Repo, a: str, b: str) -> str:
        mine = set(self._ancestors(repo, a))
        return next((s for s in self._ancestors(repo, b) if s in mine), a)

    def compare(self, repo: Repo, base: str, head: str) -> tuple[str, list[FileDiff]]:
        """Three-dot compare, as GitHub's compare and a PR's files: merge base → head."""
        base_c, head_c = self._commit_of(repo, base), self._commit_of(repo, head)
        fork = self.merge_base(repo, base_c.sha, head_c.sha)
        # Commits never change: a page of a PR of 3 000 files must not diff them all again.
        cache = self._compare_cache
        if (fork, head_c.sha) not in cache:
            cache[(fork, head_c.sha)] = file_diffs(repo.commits[fork].tree, head_c.tree)
        return fork, cache[(fork, head_c.sha)]

    def tree_at(self, repo: Repo, ref: str) -> Tree:
        return self._commit_of(repo, ref).tree

    # ---- payloads ----------------------------------------------------------------------------
    def user_json(self, u: User, *, full: bool = False) -> JSON:
        api = f"{self.api_url}/users/{u.login}"
        out: JSON = {
            "login": u.login, "id": u.id, "node_id": node_id("U", u.id),
            "avatar_url": f"https://avatars.githubusercontent.com/u/{u.id}?v=4",
            "gravatar_id": "", "url": api, "html_url": f"{self.web_url}/{u.login}",
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs", "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": u.type, "user_view_type": "public", "site_admin": False,
        }
        if full:
            out.update({"name": u.name, "company": None, "blog": "", "location": None,
                        "email": None, "hireable": None, "bio": None, "twitter_username": None,
                        "notification_email": None, "public_repos": 0, "public_gists": 0,
                        "followers": 0, "following": 0, "created_at": iso(u.created_at),
                        "updated_at": iso(u.created_at)})
        return out

    def _association(self, repo: Repo, user: User) -> str:
        return "OWNER" if user is repo.owner else "COLLABORATOR"

    def repo_json(self, r: Repo) -> JSON:
        api = f"{self.api_url}/repos/{r.full_name}"
        return {
            "id": r.id, "node_id": node_id("R", r.id), "name": r.name,
            "full_name": r.full_name, "private": r.private, "owner": self.user_json(r.owner),
            "html_url": f"{self.web_url}/{r.full_name}", "description": None, "fork": False,
            "url": api, "pulls_url": f"{api}/pulls{{/number}}",
            "issue_comment_url": f"{api}/issues/comments{{/number}}",
            "contents_url": f"{api}/contents/{{+path}}",
            "compare_url": f"{api}/compare/{{base}}...{{head}}",
            "created_at": iso(r.created_at), "updated_at": iso(r.created_at),
            "pushed_at": iso(r.created_at), "default_branch": r.default_branch,
            "visibility": "private" if r.private else "public", "archived": False,
            "disabled": False, "permissions": {"admin": False, "maintain": False, "push": True,
                                              "triage": True, "pull": True},
        }

    def _ref_json(self, pr: PullRequest, ref: str, sha: str) -> JSON:
        return {"label": f"{pr.repo.owner.login}:{ref}", "ref": ref, "sha": sha,
                "user": self.user_json(pr.repo.owner), "repo": self.repo_json(pr.repo)}

    def pull_json(self, pr: PullRequest, *, full: bool = False) -> JSON:
        api = f"{self.api_url}/repos/{pr.repo.full_name}"
        html = f"{self.web_url}/{pr.repo.full_name}/pull/{pr.number}"
        out: JSON = {
            "url": f"{api}/pulls/{pr.number}", "id": pr.id, "node_id": node_id("PR", pr.id),
            "html_url": html, "diff_url": f"{html}.diff", "patch_url": f"{html}.patch",
            "issue_url": f"{api}/issues/{pr.number}",
            "commits_url": f"{api}/pulls/{pr.number}/commits",
            "review_comments_url": f"{api}/pulls/{pr.number}/comments",
            "review_comment_url": f"{api}/pulls/comments{{/number}}",
            "comments_url": f"{api}/issues/{pr.number}/comments",
            "statuses_url": f"{api}/statuses/{pr.head_sha}",
            "number": pr.number, "state": pr.state, "locked": False, "title": pr.title,
            "user": self.user_json(pr.user), "body": pr.body or None, "labels": [],
            "milestone": None, "active_lock_reason": None, "created_at": iso(pr.created_at),
            "updated_at": iso(pr.updated_at),
            "closed_at": iso(pr.closed_at) if pr.closed_at else None,
            "merged_at": iso(pr.merged_at) if pr.merged_at else None,
            "merge_commit_sha": None, "assignee": None, "assignees": [],
            "requested_reviewers": [self.user_json(u) for u in pr.requested_reviewers],
            "requested_teams": [],
            "head": self._ref_json(pr, pr.head_ref, pr.head_sha),
            "base": self._ref_json(pr, pr.base_ref, pr.base_sha),
            "_links": {name: {"href": href} for name, href in (
                ("self", f"{api}/pulls/{pr.number}"), ("html", html),
                ("issue", f"{api}/issues/{pr.number}"),
                ("comments", f"{api}/issues/{pr.number}/comments"),
                ("review_comments", f"{api}/pulls/{pr.number}/comments"),
                ("review_comment", f"{api}/pulls/comments{{/number}}"),
                ("commits", f"{api}/pulls/{pr.number}/commits"),
                ("statuses", f"{api}/statuses/{pr.head_sha}"))},
            "author_association": self._association(pr.repo, pr.user), "auto_merge": None,
            "draft": False,
        }
        if full:
            files = self.compare(pr.repo, pr.base_sha, pr.head_sha)[1]
            out.update({"merged": pr.merged_at is not None, "mergeable": True,
                        "rebaseable": True, "mergeable_state": "clean", "merged_by": None,
                        "comments": len(pr.comments), "review_comments":
                        len(pr.review_comments), "maintainer_can_modify": False,
                        "commits": len(pr.commits),
                        "additions": sum(f.additions for f in files),
                        "deletions": sum(f.deletions for f in files),
                        "changed_files": len(files)})
        return out

    def issue_comment_json(self, c: IssueComment) -> JSON:
        repo = c.issue.repo
        api = f"{self.api_url}/repos/{repo.full_name}"
        kind = "pull" if c.issue.is_pull else "issues"
        return {
            "id": c.id, "node_id": node_id("IC", c.id),
            "url": f"{api}/issues/comments/{c.id}",
            "html_url": f"{self.web_url}/{repo.full_name}/{kind}/{c.issue.number}"
                        f"#issuecomment-{c.id}",
            "body": c.body, "user": self.user_json(c.user), "created_at": iso(c.created_at),
            "updated_at": iso(c.updated_at), "issue_url": f"{api}/issues/{c.issue.number}",
            "author_association": self._association(repo, c.user),
            "reactions": _rollup(f"{api}/issues/comments/{c.id}/reactions", c.reactions),
            "performed_via_github_app": None,
        }

    def review_comment_json(self, c: ReviewComment) -> JSON:
        repo = c.pr.repo
        api = f"{self.api_url}/repos/{repo.full_name}"
        html = f"{self.web_url}/{repo.full_name}/pull/{c.pr.number}#discussion_r{c.id}"
        out: JSON = {
            "url": f"{api}/pulls/comments/{c.id}", "pull_request_review_id": c.review.id,
            "id": c.id, "node_id": node_id("PRRC", c.id), "diff_hunk": c.diff_hunk,
            "path": c.path, "position": c.position, "original_position": c.original_position,
            "commit_id": c.commit_id, "original_commit_id": c.original_commit_id,
            "user": self.user_json(c.user), "body": c.body, "created_at": iso(c.created_at),
            "updated_at": iso(c.updated_at), "html_url": html,
            "pull_request_url": f"{api}/pulls/{c.pr.number}",
            "author_association": self._association(repo, c.user),
            "_links": {"self": {"href": f"{api}/pulls/comments/{c.id}"}, "html": {"href": html},
                       "pull_request": {"href": f"{api}/pulls/{c.pr.number}"}},
            "reactions": _rollup(f"{api}/pulls/comments/{c.id}/reactions", c.reactions),
            "start_line": c.start_line, "original_start_line": c.original_start_line,
            "start_side": c.start_side, "line": c.line,
            "original_line": c.original_line if c.subject_type == "line" else None,
            "side": c.side, "subject_type": c.subject_type,
        }
        if c.in_reply_to is not None:  # the key is absent on a thread's first comment
            out["in_reply_to_id"] = c.in_reply_to.id
        return out

    def review_json(self, r: Review) -> JSON:
        repo = r.pr.repo
        html = f"{self.web_url}/{repo.full_name}/pull/{r.pr.number}#pullrequestreview-{r.id}"
        pull = f"{self.api_url}/repos/{repo.full_name}/pulls/{r.pr.number}"
        return {
            "id": r.id, "node_id": node_id("PRR", r.id), "user": self.user_json(r.user),
            "body": r.body, "state": r.state, "html_url": html, "pull_request_url": pull,
            "author_association": self._association(repo, r.user),
            "_links": {"html": {"href": html}, "pull_request": {"href": pull}},
            "submitted_at": iso(r.submitted_at), "commit_id": r.commit_id,
        }

    def commit_json(self, repo: Repo, c: Commit) -> JSON:
        api = f"{self.api_url}/repos/{repo.full_name}"
        person = {"name": c.author.name, "email": f"{c.author.login}@users.noreply.github.com",
                  "date": iso(c.date)}
        tree_sha = hashlib.sha1(repr(sorted(c.tree.items())).encode(),
                                usedforsecurity=False).hexdigest()
        return {
            "url": f"{api}/commits/{c.sha}", "sha": c.sha,
            "node_id": node_id("C", int(c.sha[:12], 16)),
            "html_url": f"{self.web_url}/{repo.full_name}/commit/{c.sha}",
            "comments_url": f"{api}/commits/{c.sha}/comments",
            "commit": {"url": f"{api}/git/commits/{c.sha}", "author": person,
                       "committer": person, "message": c.message,
                       "tree": {"url": f"{api}/git/trees/{tree_sha}", "sha": tree_sha},
                       "comment_count": 0, "verification": {
                           "verified": False, "reason": "unsigned", "signature": None,
                           "payload": None, "verified_at": None}},
            "author": self.user_json(c.author), "committer": self.user_json(c.author),
            "parents": [{"url": f"{api}/commits/{p}", "sha": p,
                         "html_url": f"{self.web_url}/{repo.full_name}/commit/{p}"}
                        for p in c.parents],
        }

    def file_json(self, repo: Repo, head: str, f: FileDiff) -> JSON:
        api = f"{self.api_url}/repos/{repo.full_name}"
        blob = hashlib.sha1(f.patch.encode(), usedforsecurity=False).hexdigest()
        return {"sha": blob, "filename": f.filename, "status": f.status,
                "additions": f.additions, "deletions": f.deletions,
                "changes": f.additions + f.deletions,
                "blob_url": f"{self.web_url}/{repo.full_name}/blob/{head}/{f.filename}",
                "raw_url": f"{self.web_url}/{repo.full_name}/raw/{head}/{f.filename}",
                "contents_url": f"{api}/contents/{f.filename}?ref={head}",
                # No `patch` for a binary file, nor for one whose diff is too large.
                **({"patch": f.patch} if f.patch and len(f.patch) <= self.patch_limit_bytes
                   else {})}

    def reaction_json(self, r: Reaction) -> JSON:
        return {"id": r.id, "node_id": node_id("REA", r.id), "user": self.user_json(r.user),
                "content": r.content, "created_at": iso(r.created_at)}

    def compare_json(self, repo: Repo, base: str, head: str) -> JSON:
        fork, files = self.compare(repo, base, head)
        head_c = self._commit_of(repo, head)
        ahead = [s for s in self._ancestors(repo, head_c.sha)
                 if s not in set(self._ancestors(repo, fork))]
        html = f"{self.web_url}/{repo.full_name}/compare/{base}...{head}"
        return {
            "url": f"{self.api_url}/repos/{repo.full_name}/compare/{base}...{head}",
            "html_url": html, "permalink_url": html, "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "base_commit": self.commit_json(repo, self._commit_of(repo, base)),
            "merge_base_commit": self.commit_json(repo, repo.commits[fork]),
            "status": "ahead" if ahead else "identical", "ahead_by": len(ahead),
            "behind_by": 0, "total_commits": len(ahead),
            "commits": [self.commit_json(repo, repo.commits[s]) for s in reversed(ahead)],
            "files": [self.file_json(repo, head_c.sha, f) for f in files],
        }

    def content_json(self, repo: Repo, ref: str, path: str, text: str) -> JSON:
        raw = text.encode()
        encoded = base64.b64encode(raw).decode()
        sha = hashlib.sha1(b"blob %d\0" % len(raw) + raw, usedforsecurity=False).hexdigest()
        api = f"{self.api_url}/repos/{repo.full_name}"
        html = f"{self.web_url}/{repo.full_name}/blob/{ref}/{path}"
        return {"type": "file", "encoding": "base64", "size": len(raw),
                "name": path.rsplit("/", 1)[-1], "path": path,
                "content": "\n".join(encoded[i:i + 60] for i in range(0, len(encoded), 60)),
                "sha": sha, "url": f"{api}/contents/{path}?ref={ref}",
                "git_url": f"{api}/git/blobs/{sha}", "html_url": html,
                "download_url": f"{self.web_url}/{repo.full_name}/raw/{ref}/{path}",
                "_links": {"self": f"{api}/contents/{path}?ref={ref}",
                           "git": f"{api}/git/blobs/{sha}", "html": html}}

    def diff_text(self, repo: Repo, base: str, head: str) -> str:
        """The `application/vnd.github.diff` media type: a git-style unified diff."""
        out = []
        for f in self.compare(repo, base, head)[1]:
            old = "/dev/null" if f.status == "added" else f"a/{f.filename}"
            new = "/dev/null" if f.status == "removed" else f"b/{f.filename}"
            mode = {"added": "new file mode 100644\n",
                    "removed": "deleted file mode 100644\n"}.get(f.status, "")
            out.append(f"diff --git a/{f.filename} b/{f.filename}\n{mode}"
                       f"--- {old}\n+++ {new}\n{f.patch}")
        return "".join(out)

    def since(self, value: str | None) -> datetime | None:
        if not value:
            return None
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise GitHubError(422, "Invalid value for `since`", "https://docs.github.com/rest"
                              ) from None

    def thread_of(self, comment: ReviewComment) -> Any:
        return next(t for t in comment.pr.threads if t.root is comment.root)
