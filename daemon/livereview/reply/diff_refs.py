"""A job's MR with its diff refs (docs/DESIGN.md §6 "First sight").

An MR read at first sight from its GitLab listing row is stored without its diff refs
(`MergeRequest.base_sha` None): a read that makes a job reads them first, and so does every
later read — but a job that finds its MR stored without them (made otherwise) reads the MR
itself before it composes and posts: the note that follows a moved line is placed with them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from livereview.core.model import MergeRequest, Snapshot
from livereview.hosts.base import Host, ReadsFromListing


async def with_refs(host: Host, stored: Snapshot,
                    step: Callable[[Awaitable[MergeRequest]], Awaitable[MergeRequest]]
                    ) -> Snapshot:
    """`stored`, its MR read again (through `step`, the job's time limit) if its diff refs
    were not read; its threads and commits as stored."""
    if stored.mr.refs_read:
        return stored
    key = stored.mr.key
    if isinstance(host, ReadsFromListing):
        mr = await step(host.fetch_merge_request(key))
    else:  # no host stores an MR without them but one that reads from its listing
        mr = await step(_mr_of(host.fetch_mr(key.repo, key.iid)))
    return replace(stored, mr=mr)


async def _mr_of(read: Awaitable[Snapshot]) -> MergeRequest:
    return (await read).mr
