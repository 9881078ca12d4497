"""Hosts whose listing costs a request per repository and that have no change feed.

Bitbucket Data Center and Cloud list open pull requests one repository at a time and
tell nobody what changed across repositories. The poller lists such a host's repos hot
only while they have recent human activity, and every other repo once per quiet interval
(docs/bitbucket-data-center.md and docs/bitbucket-cloud.md, "What polling costs"). What
involves the bot — a pull request it reviews or took part in — may come sooner from the
host's own dashboard, where there is one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from livereview.core.model import ChangedMR


@runtime_checkable
class ListsEachRepo(Protocol):
    @property
    def involvement_feed(self) -> bool:
        """Whether `involved_mrs` reads a resource of the host (else it raises
        Unsupported): one request lists, across repositories, what involves the bot."""
        ...

    async def involved_mrs(self, repos: tuple[str, ...], since: datetime | None
                           ) -> list[ChangedMR]:
        """Open MRs of `repos` where the bot is a reviewer, a participant or the author,
        updated at or after `since` (all of them when None)."""
        ...
