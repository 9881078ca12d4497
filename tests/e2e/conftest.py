"""End-to-end harness: a loopback fake GitLab, a loopback OpenAI-compatible endpoint, a
config file pointing at both, and ways to run the real CLI (in-process `once`, or the
`run` daemon as a subprocess)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import pytest

from livereview.cli.commands import main
from livereview.core.triggers import replied_to
from livereview.sandbox.github.server import FakeGitHubServer
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.gitlab.model import JSON
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.sandbox.llm_server import FakeLLMServer
from tests.databases import ON_POSTGRESQL, instant, query, url_for

TOKEN = "glpat-e2e-SECRET-token-4242"
PROJECT = "acme/widgets"
FILES = {"src/cache.py": (
    "import threading\n\ncache = {}\n\n\ndef get(key):\n    return cache.get(key)\n",
    "import threading\n\ncache = {}\nlock = threading.Lock()\n\n\ndef get(key):\n"
    "    with lock:\n        return cache.get(key)\n",
)}


@dataclass
class Sandbox:
    gitlab: FakeGitLab
    gitlab_server: FakeGitLabServer
    llm: FakeLLMServer
    config: Path
    db: Path
    iid: int

    @property
    def database_url(self) -> str:
        """The database the config names: `db`, or in a PostgreSQL run its stand-in."""
        return url_for(self.db)

    def once(self, *extra: str) -> int:
        return main(["--config", str(self.config), *extra, "once"])

    def bot_notes(self) -> list[JSON]:
        return self.gitlab.notes_by("livereview")

    def note(self, body: str, *, reply_to_discussion: str | None = None,
             position: JSON | None = None, created_at: datetime | None = None,
             thread: bool = False) -> JSON:
        """Alice's comment on the MR (the fake's payload, typed as the fake types it)."""
        return self.gitlab.add_note(PROJECT, self.iid, author="alice", body=body,
                                    reply_to_discussion=reply_to_discussion,
                                    position=position, created_at=created_at, thread=thread)


def write_config(path: Path, gitlab_url: str, llm_url: str, db: Path | str, **daemon: object
                 ) -> None:
    """`db`: the SQLite file (in a PostgreSQL run: the database standing for it), or a
    database URL."""
    settings = {"hot_poll_interval_seconds": 1, "poll_interval_seconds": 5,
                "metrics_listen": "", "backfill_hours": 24, **daemon}
    lines = ["[daemon]", f'database_url = "{url_for(db)}"']
    lines += [f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v}"
              for k, v in settings.items()]
    lines += ["", "[ai]", f'base_url = "{llm_url}"', 'model = "sandbox"', 'api_key_env = ""',
              "timeout_seconds = 10", "", "[[hosts]]", 'name = "gl"', 'type = "gitlab"',
              f'url = "{gitlab_url}"', 'token_env = "LIVEREVIEW_E2E_TOKEN"', "",
              "[[repos]]", 'host = "gl"', f'path = "{PROJECT}"', ""]
    path.write_text("\n".join(line.replace("'", '"') for line in lines), encoding="utf-8")


@pytest.fixture
def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandbox]:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", TOKEN)
    gitlab = FakeGitLab(token=TOKEN)
    gitlab.add_user("alice", "Alice")
    gitlab.add_project(PROJECT)
    iid = gitlab.add_mr(PROJECT, title="Guard the cache with a lock",
                        description="Concurrent readers saw torn writes.", author="bob",
                        files=FILES)
    with FakeGitLabServer(gitlab) as server, FakeLLMServer() as llm:
        config, db = tmp_path / "livereview.toml", tmp_path / "state" / "livereview.db"
        write_config(config, server.url, llm.url, db)
        yield Sandbox(gitlab, server, llm, config, db, iid)


@pytest.fixture
def sandbox_database(sandbox: Sandbox, database_url: str) -> str:
    """Opt in (`pytestmark = pytest.mark.usefixtures("sandbox_database")`): the module's
    tests run once on SQLite and once on PostgreSQL (docs/DESIGN.md §12); returns the URL. A
    PostgreSQL run (LIVEREVIEW_TEST_BACKEND) has the sandbox on PostgreSQL already."""
    if database_url.startswith("sqlite") or ON_POSTGRESQL:
        return sandbox.database_url
    text = sandbox.config.read_text(encoding="utf-8")
    assert f"sqlite:///{sandbox.db}" in text
    sandbox.config.write_text(text.replace(f"sqlite:///{sandbox.db}", database_url),
                              encoding="utf-8")
    return database_url


# How long a wait may take before it counts as a hang. Not a speed bar: on a 2-core machine
# shared with other test runs a daemon took over 20 s just to start, and a test's outcome
# must not depend on the machine's speed.
BACKSTOP_SECONDS = 300.0


def wait_for(predicate: Callable[[], bool], timeout: float = BACKSTOP_SECONDS) -> float:
    """Poll `predicate` until true; returns the seconds it took. Fails the test once neither
    `timeout` (what the wait takes on a quiet machine, at most) nor BACKSTOP_SECONDS let it
    wait longer: a slow machine makes a test slower, never red."""
    limit = max(timeout, BACKSTOP_SECONDS)
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > limit:
            pytest.fail(f"condition not met within {limit}s")
        time.sleep(0.05)
    return time.monotonic() - start


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB filesystem for the database, so a test can fill it up (needs root; CI has it,
    so there a missing mount fails instead of skipping)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],  # noqa: S603, S607
                          capture_output=True, check=False)
    if done.returncode != 0:
        if os.environ.get("CI"):
            pytest.fail(f"cannot mount a tmpfs: {done.stderr.decode().strip()}")
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)  # noqa: S603, S607


def fill(disk: Path) -> Path:
    """Fill `disk` up with one file; returns it (unlink it to free the disk)."""
    filler = disk / "filler"
    with filler.open("wb", buffering=0) as out:  # unbuffered: closing has nothing to flush
        try:
            while True:
                out.write(b"\0" * 65536)
        except OSError:
            pass
    return filler


def retries_due(db: Path | str) -> None:
    """Wait until every open reply job's next attempt is due (a condition, not a nap)."""
    def due() -> bool:
        [(latest,)] = query(db, "SELECT max(next_attempt_at) FROM reply_jobs WHERE state IN "
                                "('pending', 'acked', 'answered')")
        return latest is None or instant(latest) <= datetime.now(UTC)
    wait_for(due)


# A daemon killed (or stopped at once by a second SIGTERM) keeps its leases on PostgreSQL
# until they expire, a job killed in its POST window until the step timeout; on SQLite the
# one process holds every lease without a row. Kill tests use short ones there, to stay
# about crashes and not about waiting.
TAKEOVER: dict[str, object] = (
    {"lease_seconds": 1.0, "step_timeout_seconds": 3.0} if ON_POSTGRESQL else {})


def leases_expired(db: Path | str) -> None:
    """Wait until no job or review lease of a stopped daemon is live (none on SQLite)."""
    def expired() -> bool:
        rows = query(db, "SELECT expires_at FROM leases WHERE name LIKE 'job:%' "
                         "OR name LIKE 'review:%'")
        return all(instant(at) <= datetime.now(UTC) for (at,) in rows)
    wait_for(expired)


@dataclass
class Daemon:
    process: subprocess.Popen[str]
    log: Path

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        self.process.send_signal(sig)
        return self.process.wait(timeout=timeout)

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8")


class StartDaemon(Protocol):
    """`start_daemon`: `livereview run` on the sandbox, with global `options` (such as
    `--log-level DEBUG`) before the command."""

    def __call__(self, *options: str) -> Daemon: ...


@pytest.fixture
def start_daemon(sandbox: Sandbox) -> Iterator[StartDaemon]:
    started: list[Daemon] = []

    def start(*options: str) -> Daemon:
        log = sandbox.config.with_name(f"daemon-{len(started)}.log")
        env = {**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN, "PYTHONUNBUFFERED": "1"}
        handle = log.open("w", encoding="utf-8")
        process = subprocess.Popen(  # noqa: S603 - our own CLI
            [sys.executable, "-m", "livereview", "--config", str(sandbox.config), *options,
             "run"], stdout=handle, stderr=subprocess.STDOUT, env=env, text=True)
        daemon = Daemon(process, log)
        started.append(daemon)
        return daemon

    yield start
    for daemon in started:
        if daemon.process.poll() is None:
            daemon.process.kill()
            daemon.process.wait()


# ---- the GitHub (Enterprise Server) sandbox ------------------------------------------------
GITHUB_TOKEN = "ghp_e2e-SECRET-token-4242"
GITHUB_REPO = "acme/widgets"
GITHUB_FILES = {"src/cache.py": (
    "import threading\n\ncache = {}\n\n\ndef get(key):\n    return cache.get(key)\n",
    "import threading\n\ncache = {}\nlock = threading.Lock()\n\n\ndef get(key):\n"
    "    with lock:\n        return cache.get(key)\n",
)}


@dataclass
class GitHubSandbox:
    github: FakeGitHub
    server: FakeGitHubServer
    llm: FakeLLMServer
    config: Path
    number: int
    db: Path

    @property
    def database_url(self) -> str:
        return url_for(self.db)

    def once(self) -> int:
        return main(["--config", str(self.config), "once"])

    def comment(self, body: str, author: str = "alice") -> dict[str, Any]:
        return self.github.add_issue_comment(GITHUB_REPO, self.number, author=author,
                                             body=body)

    def review_comment(self, body: str, line: int = 9) -> dict[str, Any]:
        return self.github.add_review_comment(GITHUB_REPO, self.number, author="alice",
                                              body=body, path="src/cache.py", line=line)

    def replies_to(self, message_id: str) -> list[dict[str, Any]]:
        return [c for c in self.github.comments_by("livereview")
                if replied_to(c["body"]) == message_id]


def write_github_config(path: Path, url: str, llm_url: str, db: Path | str, **daemon: object
                        ) -> None:
    settings = {"hot_poll_interval_seconds": 1, "poll_interval_seconds": 5,
                "metrics_listen": '""', "backfill_hours": 24, **daemon}
    lines = ["[daemon]", f'database_url = "{url_for(db)}"']
    lines += [f"{k} = {v}" for k, v in settings.items()]
    lines += ["", "[ai]", f'base_url = "{llm_url}"', 'model = "sandbox"', 'api_key_env = ""',
              "timeout_seconds = 10", "", "[[hosts]]", 'name = "gh"', 'type = "github"',
              f'url = "{url}"', 'token_env = "LIVEREVIEW_E2E_GITHUB_TOKEN"', "",
              "[[repos]]", 'host = "gh"', f'path = "{GITHUB_REPO}"', ""]
    path.write_text("\n".join(lines), encoding="utf-8")


@pytest.fixture
def gh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[GitHubSandbox]:
    monkeypatch.setenv("LIVEREVIEW_E2E_GITHUB_TOKEN", GITHUB_TOKEN)
    github = FakeGitHub(token=GITHUB_TOKEN)
    github.add_user("alice", "Alice")
    number = github.add_pr(GITHUB_REPO, title="Guard the cache with a lock",
                           body="Concurrent readers saw torn writes.", author="bob",
                           files=GITHUB_FILES)
    with FakeGitHubServer(github) as server, FakeLLMServer() as llm:
        config = tmp_path / "livereview.toml"
        db = tmp_path / "state" / "lr.db"
        write_github_config(config, server.enterprise_url, llm.url, db)
        yield GitHubSandbox(github, server, llm, config, number, db)
