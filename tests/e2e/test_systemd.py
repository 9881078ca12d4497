"""Type=notify against a fake notify socket: READY, STATUS, WATCHDOG only while the poll
loop is alive, STOPPING on SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from livereview.systemd import Notifier
from tests.e2e.conftest import TOKEN, Sandbox, wait_for


@pytest.fixture
def notify_socket(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.setblocking(False)
    yield sock, path
    sock.close()


def received(sock: socket.socket) -> list[dict[str, str]]:
    messages = []
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
        sandbox.gitlab_server.latency_seconds = 6.0  # every request now hangs: loop stuck
        time.sleep(3.5)
        received(sock)  # drop what was sent before the loop was surely stale
        time.sleep(2.0)
        stale = received(sock)
        assert stale and all("WATCHDOG" not in m for m in stale)  # STATUS only, no pings
        sandbox.gitlab_server.latency_seconds = 0.0
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
        assert any(m.get("STOPPING") == "1" for m in received(sock))
    finally:
        if process.poll() is None:
            process.kill()
