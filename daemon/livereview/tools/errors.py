"""What a tool call can fail with: one line a person or an agent can act on, and the exit
code the CLI gives it (2: the input was wrong or not allowed; 1: the host or the store
failed)."""

from __future__ import annotations

from typing import ClassVar

EXIT_RUNTIME, EXIT_USAGE = 1, 2
MAX_ID = 2**63 - 1  # the largest id SQLite and PostgreSQL's bigint store: none is larger


class ToolError(Exception):
    exit_code: ClassVar[int] = EXIT_RUNTIME


class BadInput(ToolError):
    """An MR reference, comment id, path or option that does not name anything."""

    exit_code = EXIT_USAGE


class WritesDisabled(ToolError):
    """A write on a host whose `agent_writes` is off."""

    exit_code = EXIT_USAGE


class HostFailed(ToolError):
    """The host refused or failed (including an operation it does not have)."""


class OutOfReach(ToolError):
    """A repo outside the host's watched [[repos]] and its agent_repos patterns."""

    exit_code = EXIT_USAGE
