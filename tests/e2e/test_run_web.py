"""`run` serving the web face beside the daemon (`[web] listen`, DESIGN §11): one process,
so a systemd deployment needs no second unit — refused in one line (exit 2) when it would
be exposed without authentication, serving the console while it polls, stopped with it."""

from __future__ import annotations

import re
import signal
import urllib.request
from collections.abc import Callable

import pytest

from livereview.cli.commands import main
from tests.e2e.conftest import TOKEN, Daemon, Sandbox, wait_for

URL = re.compile(r"http://127\.0\.0\.1:\d+/")


def with_web(sandbox: Sandbox, listen: str) -> None:
    sandbox.config.write_text(sandbox.config.read_text() + f'\n[web]\nlisten = "{listen}"\n')


def served(daemon: Daemon) -> str | None:
    """The URL of the daemon's `web_serving` log event, once it said it; fails at once if
    the daemon ended instead."""
    assert daemon.process.poll() is None, daemon.output()
    said = [URL.search(line) for line in daemon.output().splitlines() if "web_serving" in line]
    return said[0][0] if said and said[0] else None


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - loopback
        body: bytes = response.read()
    return body.decode()


@pytest.mark.creates_database("a refused start leaves no database behind")
def test_run_refuses_a_web_listen_beyond_loopback_without_authentication(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    with_web(sandbox, "0.0.0.0:8470")
    assert main(["--config", str(sandbox.config), "run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["livereview: web.listen '0.0.0.0:8470': not a loopback address, and no "
                   "authentication is configured (web.token_file, or web.trusted_header "
                   "behind a reverse proxy)"]
    assert not sandbox.db.exists()  # refused before anything started


def test_run_refuses_a_web_listen_that_is_not_host_and_port(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    with_web(sandbox, "8470")
    assert main(["--config", str(sandbox.config), "run"]) == 2
    assert "web.listen '8470': expected HOST:PORT" in capsys.readouterr().err


def test_run_serves_the_console_while_it_polls_and_stops_with_it(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    with_web(sandbox, "127.0.0.1:0")
    sandbox.note("@livereview is this lock needed?")
    daemon = start_daemon()
    wait_for(lambda: served(daemon) is not None)
    base = served(daemon) or ""
    wait_for(lambda: 'id="verdict">healthy' in fetch(base + "health"))
    wait_for(lambda: 'class="answer"' in fetch(base + "recent"))
    assert "requests left" in fetch(base + "health")  # the fake's RateLimit-Remaining
    pages = [fetch(base + path) for path in ("health", "pending", "recent", "config")]
    assert "LIVEREVIEW_E2E_TOKEN" in pages[3] and all(TOKEN not in page for page in pages)
    assert daemon.stop(signal.SIGTERM) == 0
