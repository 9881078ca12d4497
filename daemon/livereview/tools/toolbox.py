"""What every tool call runs against: the daemon's configuration, store and host adapters.

One toolbox serves many calls (the MCP server keeps it for its lifetime); each host call is
translated here into a one-line ToolError, so no face ever sees a host exception.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Concatenate, ParamSpec, TypeVar

from livereview.core.model import Identity, MRKey, Snapshot
from livereview.core.sanitize import one_line
from livereview.hosts.base import FollowsMoves, Host, HostError, NotFound, Unsupported
from livereview.log_setup import get_logger
from livereview.store.faults import StoreError
from livereview.store.reads import Reader
from livereview.store.replied_marks import Replied
from livereview.tools.errors import (
    BadInput,
    HostFailed,
    OutOfReach,
    ToolError,
    WritesDisabled,
)
from livereview.tools.scope import Reach
from livereview.tools.target import parse_mr

if TYPE_CHECKING:  # the ORM is loaded when a tool first needs it (`mr comments` may not)
    from sqlmodel import Session

    from livereview.settings.view import ToolSettings
    from livereview.store.db import Store

P = ParamSpec("P")
T = TypeVar("T")
log = get_logger("livereview.tools")


def now() -> datetime:
    return datetime.now().astimezone()


@dataclass
class Toolbox:
    settings: ToolSettings  # the models' Settings, or the light reader's (settings/view.py)
    open_store: Callable[[], Store]  # called once, when a tool first needs the store
    hosts: dict[str, Host]
    clock: Callable[[], datetime] = now
    # The MCP server's caller sees a failure as a tool error, its operator only the log;
    # the CLI's one line on stderr is the failure itself, and a log line would be a second.
    log_failures: bool = True
    # The same store read without the ORM (store/reads.py): what a CLI call that only reads
    # the replied marks uses, so that it starts without SQLAlchemy (docs/DESIGN.md §7).
    reader: Reader | None = None
    _identities: dict[str, Identity] = field(default_factory=dict)
    reach: Reach = field(init=False)
    _store: Store | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.reach = Reach.of(self.settings)

    @property
    def store(self) -> Store:
        if self._store is None:
            try:
                self._store = self.open_store()
            except StoreError as exc:
                raise ToolError(str(exc)) from exc
        return self._store

    async def close(self) -> None:
        for host in self.hosts.values():
            await host.close()
        if self._store is not None:
            self._store.close()
        if self.reader is not None:
            self.reader.close()

    # ---- inputs ---------------------------------------------------------------------
    def mr(self, text: str) -> MRKey:
        """The MR `text` names, if the agent tools reach its repo (tools/scope.py): every
        operation on an MR starts here, before any request."""
        return self.reach.key(parse_mr(self.settings.hosts, text))

    async def reached(self, text: str) -> MRKey:
        """`mr()`, and on a host that answers a moved repo's old path for it (GitLab) the
        repo it really is, checked against the same reach: an `agent_repos` pattern names
        paths, not whatever project once had one (docs/DESIGN.md §13, "Reach")."""
        key = self.mr(text)
        host = self.host(key)
        if not isinstance(host, FollowsMoves):
            return key
        real = await self.call(key, "resolve repo", host.resolved_repo(key.repo))
        if real.lower() == key.repo.lower():
            return key
        try:
            self.reach.key(MRKey(key.host, real, key.iid))
        except (OutOfReach, BadInput):
            raise OutOfReach(
                f"{key}: repo {key.repo!r} was moved to {one_line(real)!r} on host "
                f"{key.host!r}, which the agent tools do not reach (add it, or a pattern "
                "for it, to agent_repos in that [[hosts]] entry)") from None
        # By its current path from here on: GitLab ≥ 16.7 refuses every method but GET on a
        # former path (405, lib/api/helpers.rb `find_project!`).
        return MRKey(key.host, real, key.iid)

    def host(self, key: MRKey) -> Host:
        try:
            return self.hosts[key.host]
        except KeyError:
            raise BadInput(f"{key}: no configured host named {key.host!r}") from None

    def require_writes(self, key: MRKey, operation: str) -> None:
        settings = next((h for h in self.settings.hosts if h.name == key.host), None)
        if settings is None or not settings.agent_writes:
            raise WritesDisabled(
                f"{operation} on {key}: writes are off for host {key.host!r} (set "
                "agent_writes = true in its [[hosts]] entry to allow agents to write)")

    # ---- calls ----------------------------------------------------------------------
    async def call(self, key: MRKey, what: str, step: Awaitable[T]) -> T:
        """A host call whose failure becomes one line naming the MR and the operation."""
        try:
            return await step
        except HostError as exc:
            if self.log_failures:
                log.warning("tool_host_failed", operation=what, mr=str(key),
                            error=str(exc) or type(exc).__name__)
            raise self._failure(key, what, exc) from exc
        except TimeoutError as exc:
            raise HostFailed(f"{what} on {key}: the host did not answer in time") from exc

    @staticmethod
    def _failure(key: MRKey, what: str, exc: HostError) -> ToolError:
        if isinstance(exc, Unsupported):
            return HostFailed(f"{what} on {key}: not supported by host {key.host!r}: {exc}")
        if isinstance(exc, NotFound):
            return BadInput(f"{what} on {key}: not found ({exc})")
        return HostFailed(f"{what} on {key}: {exc}")

    @staticmethod
    def wrote(key: MRKey, operation: str, message_id: str = "", *, adopted: bool = False
              ) -> None:
        """Every write an agent made, in the log (stderr): who did what, where."""
        log.info("tool_wrote", operation=operation, mr=str(key), message_id=message_id,
                 adopted=adopted)

    async def stored(self, fn: Callable[Concatenate[Session, P], T], *args: P.args,
                     **kwargs: P.kwargs) -> T:
        try:
            return await self.store.run(fn, *args, **kwargs)
        except StoreError as exc:
            raise ToolError(f"database: {exc}") from exc

    async def replied_in(self, key: MRKey) -> dict[str, Replied]:
        """The MR's answered comments the store records (store/replied.py)."""
        if self.reader is not None:
            try:
                return self.reader.replied(key)  # one CLI call: nothing else on the loop
            except StoreError as exc:
                raise ToolError(f"database: {exc}") from exc
        from livereview.store.replied import replied_in

        return await self.stored(replied_in, key)

    async def identity(self, key: MRKey) -> Identity:
        """Who the bot is on the MR's host (asked once per toolbox)."""
        if key.host not in self._identities:
            self._identities[key.host] = await self.call(key, "whoami",
                                                         self.host(key).whoami())
        return self._identities[key.host]

    async def snapshot(self, key: MRKey) -> Snapshot:
        """The MR as the host has it now (not the store's copy: an agent acts on the
        present)."""
        return await self.call(key, "fetch", self.host(key).fetch_mr(key.repo, key.iid))
