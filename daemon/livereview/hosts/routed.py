"""One host, several tokens: each repo's requests go out with the token that acts there.

Some organisations give each group, organisation or repository its own bot token (a GitHub
App's installation token per organisation, a GitLab group or project access token, each a
user of its own). A `[[hosts]]` entry then has `[[hosts.tokens]]` tables, and the host is a
set of adapters of one class over one base URL, one per token (docs/DESIGN.md "Identities").
This adapter routes by repo: whatever names a repo or an MR goes to the adapter its token
pattern picks; a listing asks each token for its own repos only (an instance-wide listing
is one per token, so idle cost grows with tokens, not repos); `whoami` is the host's own
token's identity, with every other token's as `Identity.also`, so what any of them posted
is the bot's own.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from livereview.core.model import (
    Anchor,
    ChangedMR,
    DiffRefs,
    FileChange,
    FileDiff,
    Identity,
    InlineComment,
    Message,
    MRKey,
    People,
    PostedReview,
    Snapshot,
    Thread,
    Verdict,
)
from livereview.hosts.base import (
    AccessNote,
    ExplainsAccess,
    FollowsMoves,
    Host,
    LooksCheaply,
    PacedInbox,
    PagedDiffstat,
    statement,
)
from livereview.hosts.diffs import EVERY_FILE, PathFilter


@dataclass(frozen=True)
class TokenRoute:
    """One token's adapter and the repo patterns it serves (() for the host's own token,
    which serves every repo no pattern picks)."""

    host: Host
    serves: tuple[str, ...] = ()


class Routed:
    """A Host over several tokens' adapters; `pick(repo)` is the index of the route acting
    in `repo` (0, the host's own token, where no `[[hosts.tokens]]` pattern matches)."""

    def __init__(self, routes: Sequence[TokenRoute], pick: Callable[[str], int]) -> None:
        if not routes:
            raise ValueError("a routed host needs at least its own token")
        self.routes = tuple(routes)
        self._pick = pick
        first = self.routes[0].host
        self.name, self.type, self.capabilities = first.name, first.type, first.capabilities
        self._identities: tuple[Identity, ...] = ()
        self._inbox_owner: dict[str, int] = {}

    def route(self, repo: str) -> Host:
        return self.routes[self._pick(repo)].host

    def _by_route(self, repos: tuple[str, ...]) -> dict[int, tuple[str, ...]]:
        grouped: dict[int, list[str]] = {}
        for repo in repos:
            grouped.setdefault(self._pick(repo), []).append(repo)
        return {index: tuple(paths) for index, paths in grouped.items()}

    @property
    def requests_sent(self) -> int:
        return sum(r.host.requests_sent for r in self.routes)

    @property
    def listing_is_cheap(self) -> bool:
        return all(r.host.listing_is_cheap for r in self.routes)

    async def whoami(self) -> Identity:
        found = await asyncio.gather(*(r.host.whoami() for r in self.routes))
        self._identities = tuple(found)
        own = found[0]
        others = tuple(dict.fromkeys((i.user_id, i.username) for i in found[1:]
                                     if (i.user_id, i.username) != (own.user_id, own.username)))
        return Identity(own.host, own.user_id, own.username, others)

    def access_notes(self) -> list[AccessNote]:
        """Each token's identity and the repos it serves (`livereview check`), once `whoami`
        has read them."""
        notes = []
        for index, (route, identity) in enumerate(zip(self.routes, self._identities,
                                                      strict=False)):
            shown_id = f" (id {identity.user_id})" if identity.user_id else ""
            serves = (", ".join(route.serves) if route.serves
                      else "every repo no [[hosts.tokens]] pattern matches")
            subject = "token" if index == 0 else f"tokens[{index - 1}]"
            notes.append(AccessNote(subject, True, f"@{identity.username}{shown_id} acts in "
                                    f"{serves}"))
        for route in self.routes:  # what each adapter says of its own credentials
            if isinstance(route.host, ExplainsAccess):
                notes += route.host.access_notes()
        return notes

    async def mention_inbox(self, repos: tuple[str, ...]) -> dict[MRKey, list[str]]:
        merged: dict[MRKey, list[str]] = {}
        for index, paths in self._by_route(repos).items():
            host = self.routes[index].host
            if isinstance(host, PacedInbox) and not host.inbox_due():
                continue
            for key, ids in (await host.mention_inbox(paths)).items():
                merged.setdefault(key, []).extend(ids)
                self._inbox_owner.update(dict.fromkeys(ids, index))
        return merged

    async def clear_mentions(self, item_ids: list[str]) -> None:
        grouped: dict[int, list[str]] = {}
        for item in item_ids:
            grouped.setdefault(self._inbox_owner.pop(item, 0), []).append(item)
        for index, items in grouped.items():
            await self.routes[index].host.clear_mentions(items)

    async def repo_exists(self, repo: str) -> bool:
        return await self.route(repo).repo_exists(repo)

    async def list_changed_mrs(self, repos: tuple[str, ...], since: datetime | None
                               ) -> list[ChangedMR]:
        changed: list[ChangedMR] = []
        for index, paths in self._by_route(repos).items():
            changed += await self.routes[index].host.list_changed_mrs(paths, since)
        return changed

    async def fetch_mr(self, repo: str, iid: int,
                       reactions_for: frozenset[str] = frozenset()) -> Snapshot:
        return await self.route(repo).fetch_mr(repo, iid, reactions_for)

    async def fetch_thread(self, key: MRKey, thread_id: str) -> Thread:
        return await self.route(key.repo).fetch_thread(key, thread_id)

    async def diff(self, key: MRKey, head_sha: str | None = None) -> str:
        return await self.route(key.repo).diff(key, head_sha)

    async def file_content(self, repo: str, ref: str, path: str) -> str:
        return await self.route(repo).file_content(repo, ref, path)

    async def list_files(self, repo: str, ref: str, directory: str) -> list[str]:
        return await self.route(repo).list_files(repo, ref, directory)

    async def reply(self, key: MRKey, thread_id: str, body: str) -> Message:
        return await self.route(key.repo).reply(key, thread_id, body)

    async def comment(self, key: MRKey, body: str, anchor: Anchor | None = None) -> Message:
        return await self.route(key.repo).comment(key, body, anchor)

    async def note(self, key: MRKey, body: str) -> Message:
        return await statement(self.route(key.repo), key, body)

    async def react(self, key: MRKey, message_id: str, emoji: str) -> None:
        await self.route(key.repo).react(key, message_id, emoji)

    async def diffstat(self, key: MRKey, paths: PathFilter = EVERY_FILE) -> list[FileChange]:
        return await self.route(key.repo).diffstat(key, paths)

    async def diffstat_pages(self, key: MRKey, paths: PathFilter = EVERY_FILE
                             ) -> AsyncIterator[list[FileChange]]:
        host = self.route(key.repo)
        if isinstance(host, PagedDiffstat):
            async for page in host.diffstat_pages(key, paths):
                yield page
        else:
            yield await host.diffstat(key, paths)

    def diff_files(self, key: MRKey, max_file_bytes: int = 1_000_000,
                   paths: PathFilter = EVERY_FILE) -> AsyncIterator[FileDiff]:
        return self.route(key.repo).diff_files(key, max_file_bytes, paths)

    async def post_review(self, key: MRKey, refs: DiffRefs, comments: Sequence[InlineComment],
                          body: str, verdict: Verdict) -> PostedReview:
        return await self.route(key.repo).post_review(key, refs, comments, body, verdict)

    async def people(self, key: MRKey) -> People:
        return await self.route(key.repo).people(key)

    async def approve(self, key: MRKey) -> None:
        await self.route(key.repo).approve(key)

    async def unapprove(self, key: MRKey) -> None:
        await self.route(key.repo).unapprove(key)

    async def request_changes(self, key: MRKey, body: str = "") -> Message | None:
        return await self.route(key.repo).request_changes(key, body)

    async def reviews_posted(self, key: MRKey) -> list[Message]:
        return await self.route(key.repo).reviews_posted(key)

    async def resolve(self, key: MRKey, thread_id: str, resolved: bool = True) -> None:
        await self.route(key.repo).resolve(key, thread_id, resolved)

    async def resolved_repo(self, repo: str) -> str:
        host = self.route(repo)
        return await host.resolved_repo(repo) if isinstance(host, FollowsMoves) else repo

    async def close(self) -> None:
        for route in self.routes:
            await route.host.close()


class RoutedPaced(Routed):
    """A routed host whose adapters pace their inbox (GitHub's notifications): only such a
    host may be a `PacedInbox`, for that stands in for the cheap listing (sync/plan.py) —
    a routed GitLab host that were one would stop listing after its first cycle."""

    async def mr_changed(self, key: MRKey) -> bool:
        """The acting token's adapter looks (True, "read it", where it cannot)."""
        host = self.route(key.repo)
        return await host.mr_changed(key) if isinstance(host, LooksCheaply) else True

    def forget_look(self, key: MRKey) -> None:
        host = self.route(key.repo)
        if isinstance(host, LooksCheaply):
            host.forget_look(key)

    def inbox_due(self) -> bool:
        """Due once every token's inbox is: a cycle that reads the inbox lists nothing
        (sync/plan.py), so a token whose inbox is not due yet would see nothing that cycle."""
        return all(not isinstance(r.host, PacedInbox) or r.host.inbox_due()
                   for r in self.routes)
