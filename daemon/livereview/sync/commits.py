"""When an MR's read reads its commits (docs/DESIGN.md §6 "First sight"; bench figure 16).

GitLab's commits are a request of their own (hosts/base.py ReadsCommitsApart). At first
sight of hundreds of MRs most ask nothing of the bot, and nothing reads their commits: a
read leaves them out (`Snapshot.commits` None, stored as not read) and they are read when
something needs them —
- a push since the stored snapshot (a push is told from a force-push by them: sync/diff.py),
- a job the read makes (an answer's prompt shows the commits pushed since the bot spoke),
- a stored snapshot that has them (it keeps them current, as every read did before).
"""

from __future__ import annotations

from dataclasses import replace

from livereview.core.model import Snapshot
from livereview.hosts.base import Host, ReadsCommitsApart
from livereview.sync.diff import pushed


async def read(host: Host, repo: str, iid: int, reactions_for: frozenset[str]) -> Snapshot:
    """The MR's snapshot, without its commits where the host reads them apart."""
    if isinstance(host, ReadsCommitsApart):
        return await host.fetch_mr_without_commits(repo, iid, reactions_for)
    return await host.fetch_mr(repo, iid, reactions_for)


async def completed(host: Host, fresh: Snapshot) -> Snapshot:
    """`fresh` with its commits (read now if they were left out)."""
    if fresh.commits is not None or not isinstance(host, ReadsCommitsApart):
        return fresh
    return replace(fresh, commits=await host.fetch_commits(fresh.mr.key))


def needed(stored: Snapshot | None, fresh: Snapshot) -> bool:
    """Whether deciding and storing `fresh` over `stored` needs its commits (a job it makes
    is asked after deciding: sync/ingest.py NeedsCommits, sync/poller.py)."""
    if fresh.commits is not None or stored is None:
        return False
    return stored.commits is not None or pushed(stored, fresh)
