"""What a host says is one line naming the MR and the operation: an operation the host does
not have, a missing object (bad input, exit 2), any other failure (exit 1)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from livereview.core.model import MRKey
from livereview.hosts.base import Forbidden, HostError, NotFound, Transient, Unsupported
from livereview.settings import (
    AISettings,
    BotSettings,
    DaemonSettings,
    HostSettings,
    RepoSettings,
    Secret,
    Settings,
)
from livereview.tools.errors import BadInput, HostFailed, ToolError, WritesDisabled
from livereview.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from livereview.store.db import Store

KEY = MRKey("gl", "group/app", 7)


def _no_store() -> Store:
    raise AssertionError("these tests open no store")


def box(*, agent_writes: bool) -> Toolbox:
    settings = Settings(
        hosts=(HostSettings(name="gl", type="gitlab", url="https://gitlab.example",
                            token=Secret("t"), agent_writes=agent_writes),),
        repos=(RepoSettings(host="gl", path="group/app"),),
        daemon=DaemonSettings(database_url="sqlite:///unused.db"), bot=BotSettings(),
        ai=AISettings())
    return Toolbox(settings, open_store=_no_store, hosts={})  # no I/O here


async def fails(exc: HostError) -> None:
    raise exc


@pytest.mark.parametrize(("raised", "kind", "words", "code"), [
    (Unsupported("Bitbucket Cloud has no 'request changes' state"), HostFailed,
     "request_changes on gl:group/app!7: not supported by host 'gl': Bitbucket Cloud", 1),
    (NotFound("GET …/merge_requests/7: 404"), BadInput,
     "request_changes on gl:group/app!7: not found (GET", 2),
    (Forbidden("POST …: 403 (the token may not approve)"), HostFailed,
     "request_changes on gl:group/app!7: POST …: 403", 1),
    (Transient("GET …: 502"), HostFailed, "request_changes on gl:group/app!7: GET …: 502", 1),
])
async def test_host_failures_are_one_line_naming_mr_and_operation(
        raised: HostError, kind: type[ToolError], words: str, code: int) -> None:
    with pytest.raises(kind) as caught:
        await box(agent_writes=True).call(KEY, "request_changes", fails(raised))
    assert str(caught.value).startswith(words) and "\n" not in str(caught.value)
    assert caught.value.exit_code == code


def test_writes_need_agent_writes_on_that_host() -> None:
    box(agent_writes=True).require_writes(KEY, "approve")
    with pytest.raises(WritesDisabled) as caught:
        box(agent_writes=False).require_writes(KEY, "approve")
    assert str(caught.value) == (
        "approve on gl:group/app!7: writes are off for host 'gl' (set agent_writes = true "
        "in its [[hosts]] entry to allow agents to write)")
    assert caught.value.exit_code == 2
