"""What a light command's modules defer, each in a fresh interpreter (the test process has
long imported structlog and trio): httpcore without trio once the CLI has started
(cli/asyncio_only.py), and a module's logger that loads structlog with the first line it
writes (log_setup.get_logger). tests/e2e/test_cli_imports.py pins `mr comments` on them."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

import pytest

from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab

FETCH = """
import asyncio, json, sys
if sys.argv[2] == "install":
    from livereview.cli import asyncio_only
    asyncio_only.install()
import httpx2

async def fetch() -> int:
    async with httpx2.AsyncClient() as client:
        return (await client.get(sys.argv[1] + "/api/v4/version",
                                 headers={"PRIVATE-TOKEN": "t" * 20})).status_code

print(json.dumps({"status": asyncio.run(fetch()), "trio": "trio" in sys.modules}))
"""


def _fetched(url: str, mode: str) -> dict[str, object]:
    done = subprocess.run([sys.executable, "-c", FETCH, url, mode],  # noqa: S603
                          capture_output=True, check=True, timeout=600)
    found: dict[str, object] = json.loads(done.stdout)
    return found


@pytest.mark.skipif(importlib.util.find_spec("trio") is None,
                    reason="trio is not installed: httpcore cannot load it anyway")
def test_the_http_client_serves_asyncio_without_loading_trio_once_the_cli_has_started(
        ) -> None:
    with FakeGitLabServer(FakeGitLab(token="t" * 20)) as server:
        hidden = _fetched(server.url, "install")
        plain = _fetched(server.url, "plain")
    assert hidden == {"status": 200, "trio": False}
    assert plain == {"status": 200, "trio": True}  # what it costs without: httpcore takes it


LOG = """
import json, sys
from livereview import log_setup as logs
logs.configure("json", ["glpat-deferred-secret-0001"], level="WARNING")
log = logs.get_logger("livereview.test")
log.info("quiet", token="glpat-deferred-secret-0001")
after_info = "structlog" in sys.modules
log.warning("loud", token="glpat-deferred-secret-0001")
print(json.dumps({"after_info": after_info, "after_warning": "structlog" in sys.modules}))
"""


def test_a_deferred_logger_drops_what_the_level_drops_and_loads_structlog_to_log(
        ) -> None:
    done = subprocess.run([sys.executable, "-c", LOG], capture_output=True,  # noqa: S603
                          check=True, timeout=600, text=True)
    assert json.loads(done.stdout) == {"after_info": False, "after_warning": True}
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert [(line["event"], line["level"], line["token"]) for line in lines] == [
        ("loud", "warning", "***")]  # configured as asked: JSON, redacted, at its level
