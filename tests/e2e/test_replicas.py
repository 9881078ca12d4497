"""Two `livereview run` replicas on one PostgreSQL database and one fake GitLab (docs/DESIGN.md
§12): SIGKILL one of them at random moments while mentions arrive; every mention still gets
exactly one reply, both replicas did work, and `pending`/`health` answer from either.

Seeded (`LIVEREVIEW_REPLICAS_SEED`); where a kill lands still depends on timing.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.core.triggers import replied_to
from tests.databases import job_rows
from tests.e2e.conftest import PROJECT, TOKEN, Daemon, Sandbox, wait_for, write_config
from tests.e2e.test_gitlab_daemon import _free_port, _scrape

BOT = "livereview"
DEFAULT_SEED = 20261124
KILLS = 8
LEASE_SECONDS = 1.0
HOT_SECONDS = 0.2
REPOS = ("acme/widgets", "acme/gadgets", "acme/gizmos", "acme/doohickeys")


class Replicas:
    """Replica "a" and "b": one config each (its name, its metrics port), one database."""

    def __init__(self, sandbox: Sandbox, database_url: str) -> None:
        self.sandbox = sandbox
        self.started: list[tuple[str, Daemon]] = []
        self.configs: dict[str, Path] = {}
        self.ports: dict[str, int] = {}
        self.running: dict[str, Daemon] = {}
        for name in ("a", "b"):
            config = sandbox.config.with_name(f"replica-{name}.toml")
            self.ports[name] = _free_port()
            write_config(config, sandbox.gitlab_server.url, sandbox.llm.url, database_url,
                         hot_poll_interval_seconds=HOT_SECONDS, poll_interval_seconds=2,
                         retry_base_seconds=0.05, shutdown_grace_seconds=10,
                         log_format="json", replica=name, lease_seconds=LEASE_SECONDS,
                         step_timeout_seconds=3.0,
                         metrics_listen=f"127.0.0.1:{self.ports[name]}")
            text = config.read_text(encoding="utf-8")
            text += "".join(f'\n[[repos]]\nhost = "gl"\npath = "{r}"\n' for r in REPOS[1:])
            text += "\n[bot]\nmax_replies_per_mr_per_hour = 10000\nautomated_reply_seconds = 0.0\n"
            config.write_text(text, encoding="utf-8")
            self.configs[name] = config

    def start(self, name: str) -> Daemon:
        log = self.sandbox.config.with_name(f"replica-{name}-{len(self.started)}.log")
        env = {**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN, "PYTHONUNBUFFERED": "1"}
        handle = log.open("w", encoding="utf-8")
        process = subprocess.Popen(  # noqa: S603 - our own CLI
            [sys.executable, "-m", "livereview", "--config", str(self.configs[name]), "run"],
            stdout=handle, stderr=subprocess.STDOUT, env=env, text=True)
        daemon = self.running[name] = Daemon(process, log)
        self.started.append((name, daemon))
        return daemon

    def kill(self, name: str) -> None:
        daemon = self.running.pop(name)
        daemon.process.kill()
        assert daemon.process.wait(timeout=10) == -9

    def cleanup(self) -> None:
        for _, daemon in self.started:
            if daemon.process.poll() is None:
                daemon.process.kill()
                daemon.process.wait()


@pytest.fixture
def replicas(sandbox: Sandbox, postgres_url: str) -> Iterator[Replicas]:
    sandbox.gitlab.rate_limit_per_minute = None
    sandbox.gitlab_server.latency_seconds = 0.02
    sandbox.llm.llm.delay_seconds = 1.0  # jobs long in flight: both replicas see them due
    started = Replicas(sandbox, postgres_url)
    yield started
    started.cleanup()


def _events(daemons: list[Daemon], event: str) -> list[dict[str, object]]:
    found = []
    for daemon in daemons:
        for line in daemon.output().splitlines():
            if line.startswith("{") and f'"{event}"' in line:
                try:
                    found.append(json.loads(line))
                except ValueError:  # the last line of a killed replica may be cut short
                    continue
    return found


@pytest.mark.timeout(300)
def test_two_replicas_killed_at_random_answer_every_mention_exactly_once(
        sandbox: Sandbox, replicas: Replicas, postgres_url: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    seed = int(os.environ.get("LIVEREVIEW_REPLICAS_SEED") or DEFAULT_SEED)
    rng = random.Random(seed)
    print(f"\nreplicas test: LIVEREVIEW_REPLICAS_SEED={seed}")
    gitlab = sandbox.gitlab
    mrs = [(PROJECT, sandbox.iid)]
    for repo in REPOS[1:]:
        gitlab.add_project(repo)
        mrs.append((repo, gitlab.add_mr(repo, title=f"Work on {repo}", description="",
                                        author="bob", files={"a.py": ("x = 1\n", "x = 2\n")})))
    expected: set[str] = set()

    def mention() -> None:
        repo, iid = rng.choice(mrs)
        note = gitlab.add_note(repo, iid, author="alice",
                               body=f"@{BOT} question {len(expected) + 1}?")
        expected.add(str(note["id"]))

    for _ in range(6):
        mention()
    replicas.start("a")
    replicas.start("b")
    for _ in range(KILLS):
        time.sleep(rng.uniform(0.3, 2.0))
        for _ in range(rng.choice((1, 2, 3))):
            mention()
        victim = rng.choice(sorted(replicas.running))
        replicas.kill(victim)
        time.sleep(rng.uniform(0.0, 1.5))  # the other replica alone for a while
        mention()
        replicas.start(victim)

    def replies() -> Counter[str]:
        return Counter(str(replied_to(str(n["body"]))) for n in gitlab.notes_by(BOT))

    def settled() -> bool:
        rows = job_rows(postgres_url)
        return expected <= set(replies()) and all(r["state"] == "posted" for r in rows)

    wait_for(settled, timeout=60)
    # A few more hot cycles of both replicas: a late duplicate would show up now.
    polled = len(gitlab.requests)
    wait_for(lambda: len(gitlab.requests) >= polled + 40, timeout=20)

    # Either replica answers for the whole database, and labels its metrics.
    capsys.readouterr()
    assert main(["--config", str(replicas.configs["b"]), "pending"]) == 0
    assert capsys.readouterr().out.strip() == "nothing pending"
    assert main(["--config", str(replicas.configs["a"]), "health"]) == 0
    for name in ("a", "b"):
        assert f'replica="{name}"' in _scrape(replicas.ports[name])
    for name in ("a", "b"):
        assert replicas.running[name].stop() == 0

    counted = replies()
    duplicates = {target: n for target, n in counted.items() if n > 1}
    lost = expected - set(counted)
    assert not duplicates, f"seed {seed}: answered more than once: {duplicates}"
    assert not lost, f"seed {seed}: never answered: {sorted(lost)}"
    assert set(counted) == expected
    rows = job_rows(postgres_url)
    assert sorted(str(r["host_message_id"]) for r in rows) == sorted(expected)
    served = Counter({"a": 0, "b": 0})
    for name, daemon in replicas.started:
        served[name] += len(_events([daemon], "replied"))
    adopted = len(_events([d for _, d in replicas.started], "reply_adopted"))
    print(f"replicas test: seed={seed} kills={KILLS} mentions={len(expected)} "
          f"replied by a={served['a']} b={served['b']} adopted={adopted}")
    assert served["a"] and served["b"], "one replica did all the work"
    # A job runs on one replica at a time: it reaches its reply once (a replica killed
    # after recording the reply but before logging it makes one fewer, never one more).
    runs = Counter(str(e["message_id"]) for e in _events(
        [d for _, d in replicas.started], "replied"))
    assert not {m: n for m, n in runs.items() if n > 1}, f"seed {seed}: jobs run twice"
    for name, daemon in replicas.started:
        assert "Traceback" not in daemon.output(), f"replica {name}:\n{daemon.output()[-3000:]}"
