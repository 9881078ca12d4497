"""`show`: the merge request itself — title, description, people, branches, state and
revisions — the first call of an agent's review session (docs/DESIGN.md §13)."""

from __future__ import annotations

from livereview.tools import results
from livereview.tools.toolbox import Toolbox


async def show(box: Toolbox, mr: str) -> results.Overview:
    key = await box.reached(mr)
    snapshot = await box.snapshot(key)
    now = snapshot.mr
    people = await box.call(key, "show", box.host(key).people(key))
    commits = snapshot.commits or ()  # a host's fetch_mr reads them (hosts/base.py)
    head = next((c for c in commits if c.sha == now.head_sha),
                commits[0] if commits else None)  # newest first
    return results.Overview(
        mr=str(key), title=now.title, description=now.description,
        author=now.author.username, source_branch=now.source_branch,
        target_branch=now.target_branch, state=now.state, draft=people.draft,
        head_sha=now.head_sha, base_sha=now.diff_refs().base_sha, reviewers=people.reviewers,
        approved_by=people.approved_by, labels=people.labels, web_url=now.web_url,
        created_at=now.created_at.isoformat(), updated_at=now.updated_at.isoformat(),
        head_commit=None if head is None else results.CommitShown(
            sha=head.sha, author=head.author, message=head.message or head.title,
            created_at=head.created_at.isoformat()))
