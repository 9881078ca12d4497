"""`livereview run` as a real subprocess (real scheduler, real signals) against the fakes."""

from __future__ import annotations

import json
import signal
import socket
import urllib.request
from collections.abc import Callable
from datetime import datetime

import pytest

from livereview.core.triggers import replied_to
from tests.e2e.conftest import PROJECT, TOKEN, Daemon, Sandbox, wait_for

pytestmark = pytest.mark.usefixtures("sandbox_database")  # SQLite and PostgreSQL


def _age(note: dict[str, object]) -> float:
    created = datetime.fromisoformat(str(note["created_at"]))
    return (datetime.now(created.tzinfo) - created).total_seconds()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return str(response.read().decode())


def test_daemon_acks_then_answers_in_thread_and_stops_cleanly_on_sigterm(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    port = _free_port()
    sandbox.config.write_text(sandbox.config.read_text().replace(
        'metrics_listen = ""', f'metrics_listen = "127.0.0.1:{port}"'))
    daemon = start_daemon()
    wait_for(lambda: any(r[1].endswith("/merge_requests") for r in sandbox.gitlab.requests))
    note = sandbox.note("@livereview is this lock needed?",
                        position={"new_path": "src/cache.py", "new_line": 4})

    def answers(note_id: object) -> list[dict[str, object]]:
        return [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(note_id)]

    ack = wait_for(lambda: bool(sandbox.gitlab.awards_on(PROJECT, sandbox.iid, note["id"])))
    reply = wait_for(lambda: bool(answers(note["id"])))
    print(f"\nmention: time to ack {ack:.2f}s, time to reply {ack + reply:.2f}s "
          "(hot_poll_interval_seconds = 1)")

    discussion_id = next(d["id"] for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
                         if d["notes"][0]["id"] == note["id"])
    follow_up = sandbox.note("Readers only ever call get(), though.",
                             reply_to_discussion=str(discussion_id))
    wait_for(lambda: bool(answers(follow_up["id"])))
    assert len(sandbox.bot_notes()) == 2
    # Counted once the post is recorded, a moment after GitLab has the note (longer on
    # PostgreSQL under load): wait for it rather than race it.
    posted = 'livereview_replies_total{host_type="gitlab",outcome="posted"} 2.0'
    wait_for(lambda: posted in _scrape(port))
    metrics = _scrape(port)
    assert 'livereview_time_to_ack_seconds_count{host_type="gitlab"} 2.0' in metrics
    assert 'livereview_last_poll_success_timestamp_seconds{host="gl"}' in metrics
    # Pre-created at zero, so the first failure after a start is a visible increase.
    assert 'livereview_replies_total{host_type="gitlab",outcome="failed"} 0.0' in metrics
    assert 'livereview_host_requests_total{host_type="gitlab",status_class="5xx"} 0.0' in metrics

    assert daemon.stop(signal.SIGTERM) == 0
    output = daemon.output()
    assert "daemon_stopped" in output
    assert TOKEN not in output
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    replied = [e for e in lines if e.get("event") == "replied"]
    assert len(replied) == 2
    assert all(e["job_id"] and e["message_id"] and e["repo"] == PROJECT for e in replied)


def test_restarted_daemon_does_not_answer_again(sandbox: Sandbox,
                                                start_daemon: Callable[[], Daemon]) -> None:
    note = sandbox.note("@livereview is this lock needed?")
    first = start_daemon()
    wait_for(lambda: len(sandbox.bot_notes()) == 1)
    assert first.stop() == 0
    second = start_daemon()
    wait_for(lambda: sum(r[1].endswith("/discussions") for r in sandbox.gitlab.requests) >= 3)
    assert second.stop() == 0
    assert [replied_to(str(n["body"])) for n in sandbox.bot_notes()] == [str(note["id"])]
