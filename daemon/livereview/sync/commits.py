"""What an MR's read leaves out until something needs it (docs/DESIGN.md §6 "First sight";
bench figure 16): its commits, and — read from a listing row — its diff refs.

GitLab's commits are a request of their own (hosts/base.py ReadsCommitsApart). At first
sight of hundreds of MRs most ask nothing of the bot, and nothing reads their commits: a
read leaves them out (`Snapshot.commits` None, stored as not read) and they are read when
something needs them —
- a push since the stored snapshot (a push is told from a force-push by them: sync/diff.py),
- a job the read makes (an answer's prompt shows the commits pushed since the bot spoke),
- a stored snapshot that has them (it keeps them current, as every read did before).

GitLab's listing rows carry the MR but its diff refs (hosts/base.py ReadsFromListing): an
MR never read is read from its row, its discussions alone, and the MR itself is read when a
job the read makes needs its diff refs (a note on a line), or when the MR is stored already
(every later read reads it, as before).
"""

from __future__ import annotations

from dataclasses import replace

from livereview.core.model import MergeRequest, Snapshot
from livereview.hosts.base import Host, ReadsCommitsApart, ReadsFromListing
from livereview.sync.diff import pushed


async def read(host: Host, repo: str, iid: int, reactions_for: frozenset[str],
               listed: MergeRequest | None = None) -> Snapshot:
    """The MR's snapshot, without its commits where the host reads them apart; from
    `listed` (its listing row's MR) and its discussions where the host reads so."""
    if listed is not None and isinstance(host, ReadsFromListing):
        return await host.fetch_threads(listed, reactions_for)
    if isinstance(host, ReadsCommitsApart):
        return await host.fetch_mr_without_commits(repo, iid, reactions_for)
    return await host.fetch_mr(repo, iid, reactions_for)


def whole(fresh: Snapshot) -> bool:
    """Whether `fresh` has its commits and its diff refs."""
    return fresh.commits is not None and fresh.mr.refs_read


async def with_refs(host: Host, fresh: Snapshot) -> Snapshot:
    """`fresh` with its MR's diff refs: the MR read now, if it came from a listing row."""
    if fresh.mr.refs_read or not isinstance(host, ReadsFromListing):
        return fresh
    return replace(fresh, mr=await host.fetch_merge_request(fresh.mr.key))


async def completed(host: Host, fresh: Snapshot) -> Snapshot:
    """`fresh` with its commits and diff refs (read now if they were left out)."""
    fresh = await with_refs(host, fresh)
    if fresh.commits is not None or not isinstance(host, ReadsCommitsApart):
        return fresh
    return replace(fresh, commits=await host.fetch_commits(fresh.mr.key))


def needed(stored: Snapshot | None, fresh: Snapshot) -> bool:
    """Whether deciding and storing `fresh` over `stored` needs its commits (a job it makes
    is asked after deciding: sync/ingest.py NeedsCommits, sync/poller.py)."""
    if fresh.commits is not None or stored is None:
        return False
    return stored.commits is not None or pushed(stored, fresh)
