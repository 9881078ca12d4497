"""The read side of the fake Bitbucket Cloud: lookups and the REST 2.0 JSON it answers with.

`BitbucketCloudPayloads` is a base class of `FakeBitbucketCloud` (state.py),
which owns the state and the lock; callers hold it. Keys follow the `user`, `app_user`,
`repository`, `pullrequest`, `pullrequest_comment`, `participant`, `commit`,
`treeentry` and activity schemas of https://developer.atlassian.com/cloud/bitbucket/rest/
(the activity examples of …/api-group-pullrequests/#api-repositories-workspace-repo-slug-
pullrequests-activity-get show the shapes of real answers: 12-character commit hashes in
pull requests, `inline.outdated`, `content.type: "rendered"`).
"""

from __future__ import annotations

import html
import threading
from urllib.parse import quote

from livereview.sandbox.bitbucket_cloud.model import (
    JSON,
    Account,
    Comment,
    Commit,
    Participant,
    PullRequest,
    Repo,
    Update,
    iso,
    not_found,
)


def _link(href: str) -> JSON:
    return {"href": href}


class BitbucketCloudPayloads:
    lock: threading.RLock
    api_url: str  # …/2.0
    web_url: str
    repos: dict[str, Repo]
    accounts: dict[str, Account]

    # ---- lookups -------------------------------------------------------------------------
    def find_repo(self, workspace: str, slug: str) -> Repo:
        repo = self.repos.get(f"{workspace}/{slug}".lower())
        if repo is None:
            raise not_found(f"Repository {workspace}/{slug} not found")
        return repo

    def find_pr(self, repo: Repo, number: int) -> PullRequest:
        pr = repo.prs.get(number)
        if pr is None:
            raise not_found(f"Pull request {number} not found")
        return pr

    def find_comment(self, pr: PullRequest, comment_id: int) -> Comment:
        found = next((c for c in pr.comments if c.id == comment_id), None)
        if found is None:
            raise not_found(f"Comment {comment_id} not found")
        return found

    def account(self, name: str) -> Account:
        found = self.accounts.get(name.lower())
        if found is None:
            raise KeyError(f"no account {name!r} in the fake (add_user first)")
        return found

    # ---- accounts and repos ----------------------------------------------------------------
    def account_json(self, a: Account, *, full: bool = False) -> JSON:
        quoted = quote(a.uuid)
        out: JSON = {
            "display_name": a.display_name,
            "links": {"self": _link(f"{self.api_url}/users/{quoted}"),
                      "avatar": _link(f"{self.web_url}/account/{quoted}/avatar/"),
                      "html": _link(f"{self.web_url}/{quoted}/")},
            "type": a.type, "uuid": a.uuid, "account_id": a.account_id}
        if a.type == "user":
            out["nickname"] = a.name
        else:
            out.update(kind=a.kind, account_status="active")
        if full:  # GET /user: the caller's own account
            out.update(username=a.name, created_on=iso(a.created_on), account_status="active",
                       has_2fa_enabled=None, is_staff=False, website=None, location=None)
        return out

    def repo_json(self, r: Repo, *, brief: bool = False) -> JSON:
        base = f"{self.api_url}/repositories/{r.full_name}"
        out: JSON = {"type": "repository", "full_name": r.full_name, "name": r.slug,
                     "uuid": r.uuid, "links": {"self": _link(base),
                                               "html": _link(f"{self.web_url}/{r.full_name}"),
                                               "avatar": _link(f"{base}/avatar")}}
        if brief:
            return out
        out.update(slug=r.slug, is_private=True, scm="git", description="", language="python",
                   created_on=iso(r.created_on), updated_on=iso(r.created_on),
                   mainbranch={"type": "branch", "name": r.main}, has_issues=False,
                   has_wiki=False, fork_policy="no_public_forks",
                   owner={"type": "team", "uuid": f"{{{r.workspace}}}",
                          "display_name": r.workspace, "username": r.workspace},
                   links={**out["links"],
                          "pullrequests": _link(f"{base}/pullrequests"),
                          "commits": _link(f"{base}/commits")})
        return out

    # ---- commits -------------------------------------------------------------------------
    def commit_ref(self, r: Repo, sha: str) -> JSON:
        """A commit as a pull request names it: 12 characters."""
        base = f"{self.api_url}/repositories/{r.full_name}"
        return {"type": "commit", "hash": sha[:12],
                "links": {"self": _link(f"{base}/commit/{sha[:12]}"),
                          "html": _link(f"{self.web_url}/{r.full_name}/commits/{sha[:12]}")}}

    def commit_json(self, r: Repo, c: Commit) -> JSON:
        base = f"{self.api_url}/repositories/{r.full_name}"
        return {"type": "commit", "hash": c.hash, "date": iso(c.date), "message": c.message,
                "author": {"type": "author", "raw": f"{c.author.display_name} <x@example.com>",
                           "user": self.account_json(c.author)},
                "summary": {"type": "rendered", "raw": c.message, "markup": "markdown",
                            "html": f"<p>{html.escape(c.message)}</p>"},
                "parents": [{"type": "commit", "hash": p,
                             "links": {"self": _link(f"{base}/commit/{p}")}} for p in c.parents],
                "repository": self.repo_json(r, brief=True),
                "links": {"self": _link(f"{base}/commit/{c.hash}"),
                          "html": _link(f"{self.web_url}/{r.full_name}/commits/{c.hash}")}}

    # ---- pull requests -------------------------------------------------------------------
    def _endpoint(self, pr: PullRequest, branch: str, sha: str) -> JSON:
        return {"branch": {"name": branch}, "commit": self.commit_ref(pr.repo, sha),
                "repository": self.repo_json(pr.repo, brief=True)}

    def pr_brief(self, pr: PullRequest) -> JSON:
        base = f"{self.api_url}/repositories/{pr.repo.full_name}/pullrequests/{pr.id}"
        return {"type": "pullrequest", "id": pr.id, "title": pr.title,
                "links": {"self": _link(base), "html": _link(self.pr_html(pr))}}

    def pr_html(self, pr: PullRequest) -> str:
        return f"{self.web_url}/{pr.repo.full_name}/pull-requests/{pr.id}"

    def participant_json(self, p: Participant) -> JSON:
        return {"type": "participant", "user": self.account_json(p.user), "role": p.role,
                "approved": p.state == "approved", "state": p.state,
                "participated_on": iso(p.participated_on) if p.participated_on else None}

    def pr_json(self, pr: PullRequest) -> JSON:
        base = f"{self.api_url}/repositories/{pr.repo.full_name}/pullrequests/{pr.id}"
        links = {name: _link(f"{base}/{name}") for name in (
            "commits", "approve", "request-changes", "diff", "diffstat", "comments", "activity",
            "merge", "decline", "statuses")}
        summary = {"type": "rendered", "raw": pr.description, "markup": "markdown",
                   "html": f"<p>{html.escape(pr.description)}</p>"}
        return {
            "type": "pullrequest", "id": pr.id, "title": pr.title,
            "description": pr.description, "summary": summary,
            "rendered": {"title": {**summary, "raw": pr.title}, "description": summary},
            "state": pr.state, "author": self.account_json(pr.author),
            "source": self._endpoint(pr, pr.source_branch, pr.head),
            "destination": self._endpoint(pr, pr.destination_branch, pr.destination),
            "merge_commit": None, "comment_count": sum(not c.deleted for c in pr.comments),
            "task_count": 0, "close_source_branch": False, "closed_by": None, "reason": "",
            "created_on": iso(pr.created_on), "updated_on": iso(pr.updated_on),
            "reviewers": [self.account_json(p.user) for p in pr.participants
                          if p.role == "REVIEWER"],
            "participants": [self.participant_json(p) for p in pr.participants],
            "links": {"self": _link(base), "html": _link(self.pr_html(pr)), **links}}

    # ---- comments and activity --------------------------------------------------------------
    def comment_json(self, c: Comment) -> JSON:
        base = (f"{self.api_url}/repositories/{c.pr.repo.full_name}/pullrequests/{c.pr.id}"
                f"/comments/{c.id}")
        raw = "" if c.deleted else c.raw
        out: JSON = {
            "type": "pullrequest_comment", "id": c.id, "created_on": iso(c.created_on),
            "updated_on": iso(c.updated_on), "deleted": c.deleted, "pending": False,
            "content": {"type": "rendered", "raw": raw, "markup": "markdown",
                        "html": f"<p>{html.escape(raw)}</p>" if raw else ""},
            "user": self.account_json(c.user), "pullrequest": self.pr_brief(c.pr),
            "links": {"self": _link(base),
                      "html": _link(f"{self.pr_html(c.pr)}/_/diff#comment-{c.id}")}}
        if c.parent is not None:
            out["parent"] = {"id": c.parent.id, "links": {"self": _link(
                base.rsplit("/", 1)[0] + f"/{c.parent.id}")}}
        if c.inline is not None:
            out["inline"] = {"from": c.inline.from_, "to": c.inline.to, "path": c.inline.path,
                             "outdated": c.inline.outdated, "context_lines": ""}
        if c.resolution is not None:
            out["resolution"] = self.resolution_json(c)
        return out

    def resolution_json(self, c: Comment) -> JSON:
        assert c.resolution is not None
        user, when = c.resolution
        return {"type": "comment_resolution", "user": self.account_json(user),
                "created_on": iso(when)}

    def update_json(self, pr: PullRequest, u: Update) -> JSON:
        return {"update": {
            "description": pr.description, "title": pr.title, "reason": "", "state": u.state,
            "date": iso(u.date), "author": self.account_json(u.author),
            "source": self._endpoint(pr, pr.source_branch, u.source),
            "destination": self._endpoint(pr, pr.destination_branch, u.destination)},
            "pull_request": self.pr_brief(pr)}

    def activity(self, pr: PullRequest) -> list[JSON]:
        """The PR's activity log, newest first: updates, comments and approvals."""
        dated: list[tuple[object, int, JSON]] = [
            (u.date, u.seq, self.update_json(pr, u)) for u in pr.updates]
        dated += [(c.created_on, c.seq, {"comment": self.comment_json(c),
                                         "pull_request": self.pr_brief(pr)})
                  for c in pr.comments]
        dated += [(p.participated_on, 1 << 62, {"approval": {
            "date": iso(p.participated_on), "user": self.account_json(p.user),
            "pullrequest": self.pr_brief(pr)}, "pull_request": self.pr_brief(pr)})
                  for p in pr.participants if p.state == "approved" and p.participated_on]
        dated.sort(key=lambda item: (item[0], item[1]), reverse=True)
        return [entry for _, _, entry in dated]

    def tree_json(self, r: Repo, c: Commit, directory: str) -> list[JSON]:
        """A directory's entries at a commit (`commit_file` / `commit_directory`)."""
        prefix = directory.strip("/") + "/" if directory.strip("/") else ""
        names = sorted({p[len(prefix):].split("/")[0] for p in c.tree if p.startswith(prefix)})
        base = f"{self.api_url}/repositories/{r.full_name}/src/{c.hash}"
        out = []
        for name in names:
            path = prefix + name
            kind = "commit_file" if path in c.tree else "commit_directory"
            entry: JSON = {"type": kind, "path": path, "commit": self.commit_ref(r, c.hash),
                           "links": {"self": _link(f"{base}/{path}")}}
            if kind == "commit_file":
                entry.update(size=len(c.tree[path].encode()), attributes=[],
                             escaped_path=path, mimetype="text/plain")
            out.append(entry)
        return out
