"""What the MR tools read of the settings (docs/DESIGN.md §13): the hosts with their tokens
and reach, the repos watched on each, and where the store is. Both the models' `Settings`
and the light reader's `LightSettings` (settings/light.py) are one, so `livereview mr`
starts without pydantic when its config allows (docs/getting-started.md, "A CLI for
loops"); `livereview mcp` and every other command keep the models' `Settings`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from livereview.settings.secret import Secret


class TokenView(Protocol):
    """A `[[hosts.tokens]]` table: the token acting in the repos its patterns match."""

    @property
    def repos(self) -> tuple[str, ...]: ...
    @property
    def token(self) -> Secret: ...


class HostView(Protocol):
    """A `[[hosts]]` table, as an adapter is built from it (app/hosts.py)."""

    @property
    def name(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def url(self) -> str: ...
    @property
    def token(self) -> Secret: ...
    @property
    def ca_bundle(self) -> str | None: ...
    @property
    def username(self) -> str | None: ...
    @property
    def login(self) -> str | None: ...
    @property
    def max_concurrent_requests(self) -> int: ...
    @property
    def request_timeout_seconds(self) -> float: ...
    @property
    def max_response_mb(self) -> int: ...
    @property
    def list_strategy(self) -> str: ...
    @property
    def agent_writes(self) -> bool: ...
    @property
    def agent_repos(self) -> tuple[str, ...]: ...
    @property
    def tokens(self) -> Sequence[TokenView]: ...


class StoreView(Protocol):
    """Where the store is, and how long a SQLite lock is waited for."""

    @property
    def database_url(self) -> str: ...
    @property
    def busy_timeout_seconds(self) -> float: ...


class DaemonView(StoreView, Protocol):
    """The `[daemon]` keys a tool's reply claim is timed by (tools/writing.py)."""

    @property
    def lease_seconds(self) -> float: ...
    @property
    def step_timeout_seconds(self) -> float: ...


def secrets_of(hosts: Sequence[HostView], *others: Secret) -> tuple[str, ...]:
    """Every secret a config read — the hosts' tokens, their `[[hosts.tokens]]`, then
    `others` (the model's key, the web token) — as the log redactor and the web pages mask
    them; for the models' `Settings` and the light reader's alike."""
    found = [h.token.reveal() for h in hosts]
    found += [t.token.reveal() for h in hosts for t in h.tokens]
    found += [secret.reveal() for secret in others]
    return tuple(s for s in found if s)


class ToolSettings(Protocol):
    """What a toolbox is opened with (app/wiring.py)."""

    @property
    def hosts(self) -> Sequence[HostView]: ...
    @property
    def daemon(self) -> DaemonView: ...
    def repos_of(self, host: str) -> tuple[str, ...]: ...
