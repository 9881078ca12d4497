"""Type=notify against a fake notify socket: READY, STATUS, WATCHDOG only while the poll
loop is alive, STOPPING on SIGTERM; start-up and shutdown within the unit's timeouts."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from livereview.app.daemon import IDENTITY_TIMEOUT_SECONDS
from livereview.settings import DaemonSettings
from livereview.systemd import Notifier
from tests.e2e.conftest import (
    BACKSTOP_SECONDS,
    PROJECT,
    TOKEN,
    Daemon,
    Sandbox,
    wait_for,
    write_config,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.setblocking(False)
    yield sock, path
    sock.close()


def received(sock: socket.socket) -> list[dict[str, str]]:
    messages: list[dict[str, str]] = []
    while True:
        try:
            data = sock.recv(4096)
        except BlockingIOError:
            return messages
        messages.append(dict(line.split("=", 1) for line in data.decode().splitlines()))


def test_notifier_speaks_the_sd_notify_protocol(notify_socket: tuple[socket.socket, str]
                                                ) -> None:
    sock, path = notify_socket
    notifier = Notifier({"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "4000000"})
    assert notifier.watchdog_seconds == 4.0
    assert notifier.ready("all good")
    assert notifier.watchdog("still good")
    assert received(sock) == [{"READY": "1", "STATUS": "all good"},
                              {"WATCHDOG": "1", "STATUS": "still good"}]


def test_notifier_is_silent_outside_systemd_and_for_another_pids_watchdog() -> None:
    assert not Notifier({}).ready("x")
    other = Notifier({"NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "1000", "WATCHDOG_PID": "1"})
    assert other.address == "\0x"
    assert other.watchdog_seconds is None or os.getpid() == 1


def test_daemon_is_ready_pings_while_alive_stops_pinging_when_stuck(
        sandbox: Sandbox, notify_socket: tuple[socket.socket, str]) -> None:
    sock, path = notify_socket
    # The host's request timeout at its most (600 s, past the backstop): a request the fake
    # holds keeps the tick that sent it stuck for as long as the test holds it.
    text = sandbox.config.read_text(encoding="utf-8")
    patient = text.replace('token_env = "LIVEREVIEW_E2E_TOKEN"\n',
                           'token_env = "LIVEREVIEW_E2E_TOKEN"\nrequest_timeout_seconds = 600\n')
    assert patient != text
    sandbox.config.write_text(patient, encoding="utf-8")
    env = {**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN, "NOTIFY_SOCKET": path,
           "WATCHDOG_USEC": "2000000"}
    process = subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(sandbox.config), "run"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        messages: list[dict[str, str]] = []

        def pinged_twice() -> bool:
            messages.extend(received(sock))
            return sum("WATCHDOG" in m for m in messages) >= 2

        wait_for(pinged_twice)
        assert messages[0]["READY"] == "1"
        assert messages[0]["STATUS"].startswith("hosts healthy")
        # The next tick's listing waits at the host until released: the loop is stuck.
        listing = sandbox.gitlab.hold("GET", r"/merge_requests(\?|$)",
                                      timeout=BACKSTOP_SECONDS)
        assert listing.arrived.wait(BACKSTOP_SECONDS)
        received(sock)  # sent before: the held tick had not begun
        # The watchdog speaks every WATCHDOG_USEC / 2 = 1 s at the soonest, and the held
        # tick began before the request arrived: from the fourth message on (3 s later at
        # least) the heartbeat is older than the 2 s period, however slow the machine.
        since: list[dict[str, str]] = []

        def spoken(count: int) -> bool:
            since.extend(received(sock))
            return len(since) >= count

        wait_for(lambda: spoken(6))
        stale = since[3:]
        assert all("WATCHDOG" not in m and "STATUS" in m for m in stale), since  # no pings
        listing.release()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert any(m.get("STOPPING") == "1" for m in received(sock))
    finally:
        if process.poll() is None:
            process.kill()


def start_notified(sandbox: Sandbox, path: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN, "NOTIFY_SOCKET": path}
    return subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(sandbox.config), "run"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def ready(sock: socket.socket, seen: list[dict[str, str]]) -> bool:
    seen.extend(received(sock))
    return any(m.get("READY") == "1" for m in seen)


@pytest.mark.parametrize("identity_stored", [True, False])
def test_ready_does_not_wait_for_a_host_that_accepts_but_never_answers(
        sandbox: Sandbox, notify_socket: tuple[socket.socket, str], identity_stored: bool
        ) -> None:
    """Was: READY=1 waited 122 s for GET /user, past systemd's start timeout, so the unit
    was restarted in a loop. Now the stored identity is used at once (and refreshed in the
    background); without one, the lookup is bounded to IDENTITY_TIMEOUT_SECONDS."""
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 shutdown_grace_seconds=1)  # the poll cycle in flight hangs too
    if identity_stored:
        assert sandbox.once() == 0
    sandbox.gitlab_server.latency_seconds = 120.0
    sock, path = notify_socket
    process = start_notified(sandbox, path)
    try:
        seen: list[dict[str, str]] = []
        wait_for(lambda: ready(sock, seen), timeout=IDENTITY_TIMEOUT_SECONDS + 15)
        sandbox.gitlab_server.latency_seconds = 0.0
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=60) == 0
    finally:
        if process.poll() is None:
            process.kill()


def test_the_unit_bounds_start_and_stop_and_makes_the_ai_key_optional() -> None:
    unit = (ROOT / "systemd" / "livereview.service").read_text(encoding="utf-8")
    settings = dict(line.split("=", 1) for line in unit.splitlines()
                    if "=" in line and not line.startswith("#"))
    # READY comes within the identity bound (plus a migration); stop within the grace.
    assert float(settings["TimeoutStartSec"]) > IDENTITY_TIMEOUT_SECONDS * 3
    grace = DaemonSettings(database_url="sqlite:////var/lib/livereview/livereview.db").shutdown_grace_seconds
    assert float(settings["TimeoutStopSec"]) >= grace + 10
    # A SetCredential= of the same name makes a missing LoadCredential= file non-fatal
    # (systemd.exec(5), "Credentials"): keyless local models start without the file.
    assert "LoadCredential=openai-key:/etc/livereview/credentials/openai-key" in unit
    assert "SetCredential=openai-key:" in unit
    assert settings["UMask"] == "0077"


def test_sigterm_during_a_hanging_request_and_a_slow_answer_stops_within_one_grace(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    """Was: 30-60 s (the poll cycle's grace, then the replies' grace), past the unit's
    TimeoutStopSec, and a 60-line CancelledError traceback."""
    grace = 2.0
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 log_format="json", shutdown_grace_seconds=grace)
    sandbox.llm.llm.delay_seconds = 60.0  # the answer is still being written at SIGTERM
    note = sandbox.note("@livereview is this lock needed?")
    daemon = start_daemon()
    wait_for(lambda: bool(sandbox.gitlab.awards_on(PROJECT, sandbox.iid, note["id"])))
    # The worker is writing the answer: it sends GitLab nothing more until the model is
    # done, so the next request GitLab sees is the poller's (not the worker's last read).
    wait_for(lambda: bool(sandbox.llm.llm.prompts))
    sandbox.gitlab_server.latency_seconds = 60.0  # and the next poll request hangs:
    polled = len(sandbox.gitlab.requests)  # one recorded from now on reads that latency
    wait_for(lambda: len(sandbox.gitlab.requests) > polled)  # a tick now waits on GitLab
    assert daemon.stop(timeout=grace + 20) == 0
    output = daemon.output()
    assert "Traceback" not in output and "CancelledError" not in output
    [stopped] = [json.loads(line) for line in output.splitlines()
                 if '"daemon_stopped"' in line]
    assert (stopped["in_flight_finished"], stopped["cycle_finished"]) == (False, False)
    assert stopped["seconds"] < 2 * grace  # one deadline for both, not one after the other
    assert sandbox.bot_notes() == []  # nothing half-posted; the job resumes at next start
