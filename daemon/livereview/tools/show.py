"""`show`: the merge request itself — title, description, people, branches, state and
revisions — the first call of an agent's review session (docs/DESIGN.md §13)."""

from __future__ import annotations

from livereview.tools import results
from livereview.tools.toolbox import Toolbox


async def show(box: Toolbox, mr: str) -> results.Overview:
    key = await box.reached(mr)
    now = (await box.snapshot(key)).mr
    people = await box.call(key, "show", box.host(key).people(key))
    return results.Overview(
        mr=str(key), title=now.title, description=now.description,
        author=now.author.username, source_branch=now.source_branch,
        target_branch=now.target_branch, state=now.state, draft=people.draft,
        head_sha=now.head_sha, base_sha=now.base_sha, reviewers=people.reviewers,
        approved_by=people.approved_by, labels=people.labels, web_url=now.web_url,
        created_at=now.created_at.isoformat(), updated_at=now.updated_at.isoformat())
