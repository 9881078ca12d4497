"""GitHub: review threads' resolution — read and set over GraphQL only (REST has neither),
the states of a pull request's threads reused for RESOLUTION_TTL because GraphQL has no
conditional requests and hot pull requests are read every few seconds.

Docs: https://docs.github.com/en/graphql/reference/objects#pullrequestreviewthread,
…/graphql/reference/mutations#resolvereviewthread, …#unresolvereviewthread.
"""

from __future__ import annotations

import time

import structlog

from livereview.core.model import MRKey
from livereview.hosts.base import BadResponse, Conflict, Forbidden, NotFound
from livereview.hosts.github.graphql import GraphQL, ThreadState
from livereview.hosts.github.payloads import REVIEW, parse_id

log = structlog.get_logger("livereview.github")
RESOLUTION_TTL = 60.0  # seconds a PR's thread resolution states are reused (GraphQL costs)


class Resolutions:
    """Each pull request's review thread states (by root comment id), when they were read."""

    def __init__(self, graphql: GraphQL, name: str) -> None:
        self.graphql = graphql
        self.name = name
        self._states: dict[MRKey, tuple[float, dict[int, ThreadState]]] = {}

    async def states(self, key: MRKey, roots: set[int], *, fresh: bool = False
                     ) -> dict[int, ThreadState]:
        """Resolution and node ids of the PR's review threads (GraphQL only). Reused for
        RESOLUTION_TTL unless a new thread appeared: hot PRs are fetched every few seconds
        and GraphQL has no conditional requests."""
        if not roots:
            return {}
        fetched_at, states = self._states.get(key, (0.0, {}))
        if not fresh and roots <= set(states) and time.monotonic() - fetched_at < RESOLUTION_TTL:
            return states
        try:
            states = await self.graphql.review_threads(key.repo, key.iid)
        except (Forbidden, NotFound, BadResponse) as exc:
            # The conversation is readable without it; threads just show as unresolved.
            log.warning("review_thread_states_unavailable", host=self.name, mr=str(key),
                        reason=str(exc))
            return states
        self._states[key] = (time.monotonic(), states)
        return states

    async def resolve(self, key: MRKey, thread_id: str, resolved: bool) -> None:
        kind, root = parse_id(thread_id)
        if kind != REVIEW:
            raise Conflict(f"{thread_id}: only review threads can be resolved on GitHub")
        state = (await self.states(key, {root}, fresh=True)).get(root)
        if state is None:
            raise NotFound(f"review thread {thread_id} not in {key}")
        now = await self.graphql.set_resolved(state.node_id, resolved)
        fetched_at, states = self._states.get(key, (0.0, {}))
        self._states[key] = (fetched_at, {**states, root: ThreadState(state.node_id, now)})
