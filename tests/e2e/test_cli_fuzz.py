"""CLI fuzz: the real command line (`python -m livereview`) over broken configs, environments,
databases and hosts. Every case must end with the right exit code (2 bad input, 1 runtime
failure), exactly one line on stderr naming the key or the cause, no traceback, and nothing
created on disk — not in the case's folder, not in $HOME.

The cases run four at a time in one module-scoped fixture (each is a fresh interpreter,
about a second of CPU); each case is then its own test, so a failure names its case.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.sandbox.llm_server import FakeLLMServer
from livereview.store.db import Store
from tests.databases import url_for
from tests.e2e.conftest import PROJECT, TOKEN
from tests.e2e.test_sick_database import damage

Cleanup = Callable[[], None]
# The module fixture runs every case (about a second of CPU each, four at a time) before
# the first test: on a loaded 2-core machine that passed pytest's 120 s per test.
# One xdist worker runs them all (`--dist loadgroup`): the module fixture is per worker.
# Each case sets up its own database, or none, and checks what the command created.
pytestmark = [pytest.mark.timeout(600), pytest.mark.xdist_group("cli_fuzz"),
              pytest.mark.creates_database("each case's world holds its own database or none")]
# Every case fails, however long the interpreter takes to start on a busy machine; a daemon
# that starts after all runs forever, so it is stopped once it logs `daemon_started`
# (an event, not a duration: a slow start-up must not look like a hang).
STARTED = "daemon_started"


@dataclass(frozen=True)
class Servers:
    gitlab: str  # a fake GitLab that knows TOKEN
    llm: str  # an OpenAI-compatible fake
    html: str  # answers every path with a login page, as a proxy would
    closed: str  # nothing listens there
    template_db: Path  # an empty, migrated database to copy


@dataclass
class Place:
    """One case's world: its folder (with $HOME inside), its config and its environment."""

    root: Path
    servers: Servers
    env: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def config(self) -> Path:
        return self.root / "livereview.toml"

    @property
    def db(self) -> Path:
        return self.root / "state" / "livereview.db"

    def text(self, *, daemon: str = "", ai: str = "", repos: str = "", gitlab: str = "",
             host: str = 'token_env = "LIVEREVIEW_E2E_TOKEN"') -> str:
        return (f'[daemon]\ndatabase_url = "{url_for(self.db)}"\nmetrics_listen = ""\n'
                f'busy_timeout_seconds = 0.5\n{daemon}\n'
                f'[ai]\nbase_url = "{self.servers.llm}"\nmodel = "sandbox"\napi_key_env = ""\n'
                f'{ai}\n[[hosts]]\nname = "gl"\ntype = "gitlab"\n'
                f'url = "{gitlab or self.servers.gitlab}"\n'
                f'{host}\n\n'
                f'[[repos]]\nhost = "gl"\npath = "{PROJECT}"\n{repos}')

    def write(self, text: str | bytes | None = None, **parts: str) -> None:
        content = self.text(**parts) if text is None else text
        if isinstance(content, bytes):
            self.config.write_bytes(content)
        else:
            self.config.write_text(content, encoding="utf-8")

    def with_database(self) -> Path:
        self.db.parent.mkdir(mode=0o700)
        shutil.copy(self.servers.template_db, self.db)
        return self.db


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]
    code: int
    says: str  # in the one line on stderr (for `check`: in its one FAIL row on stdout)
    setup: Callable[[Place], Cleanup | None] = lambda place: place.write()
    sqlite_only: str = ""  # why the case is about SQLite itself (skipped on PostgreSQL)


def config(**parts: str) -> Callable[[Place], None]:
    return lambda place: place.write(**parts)


def raw(content: str | bytes) -> Callable[[Place], None]:
    return lambda place: place.write(content)


def replaced(old: str, new: str) -> Callable[[Place], None]:
    def setup(place: Place) -> None:
        text = place.text()
        assert old in text, old
        place.write(text.replace(old, new, 1))
    return setup


def unset(variable: str) -> Callable[[Place], None]:
    def setup(place: Place) -> None:
        place.write()
        place.env.pop(variable, None)
    return setup


def token_file(content: bytes | None, *, directory: bool = False) -> Callable[[Place], None]:
    def setup(place: Place) -> None:
        path = place.root / "token"
        if directory:
            path.mkdir()
        elif content is not None:
            path.write_bytes(content)
        place.write(host=f'token_file = "{path}"')
    return setup


def database(kind: str) -> Callable[[Place], Cleanup | None]:
    def setup(place: Place) -> Cleanup | None:
        place.write()
        if kind == "garbage":
            place.db.parent.mkdir(mode=0o700)
            place.db.write_bytes(os.urandom(3) * 20_000)
        elif kind == "damaged":
            tables = ("provider_identities", "reply_jobs", "poll_watermarks", "mr_messages",
                      "mr_conversations", "ai_memory")
            damage(place.with_database(), *tables)
        elif kind == "directory":
            place.db.mkdir(parents=True)
        elif kind == "under a file":
            place.db.parent.write_text("not a directory")
        elif kind == "newer":
            with contextlib.closing(sqlite3.connect(place.with_database())) as conn, conn:
                conn.execute("UPDATE alembic_version SET version_num = 'f00dfeed'")
        elif kind == "locked":
            holder = sqlite3.connect(place.with_database(), check_same_thread=False,
                                     isolation_level=None)
            holder.execute("BEGIN EXCLUSIVE")
            return holder.close
        elif kind == "read-only":
            return read_only(place)
        return None
    return setup


def read_only(place: Place) -> Cleanup:
    """The database's directory on a read-only filesystem (root ignores file modes)."""
    place.with_database()
    directory = str(place.db.parent)
    if os.geteuid() != 0:
        place.db.parent.chmod(0o500)
        return lambda: place.db.parent.chmod(0o700)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "tmpfs", directory],  # noqa: S603, S607
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    shutil.copy(place.servers.template_db, place.db)
    subprocess.run(["mount", "-o", "remount,ro", directory], check=True)  # noqa: S603, S607
    def unmount() -> None:
        subprocess.run(["umount", "-l", directory], check=False)  # noqa: S603, S607
    return unmount


def token_is(value: str) -> Callable[[Place], None]:
    """A good config, with the token's variable set to `value`."""
    def setup(place: Place) -> None:
        place.write()
        place.env.update(LIVEREVIEW_E2E_TOKEN=value)
    return setup


def metrics_on(listen: str) -> Callable[[Place], None]:
    return lambda place: place.write(place.text().replace('metrics_listen = ""',
                                                          f'metrics_listen = "{listen}"'))


def port_in_use(place: Place) -> Cleanup:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    metrics_on(f"127.0.0.1:{taken.getsockname()[1]}")(place)
    return taken.close


def home_is_a_file(place: Place) -> None:
    place.write("\n".join(line for line in place.text().splitlines()
                          if not line.startswith("database_url")))
    place.home.rmdir()
    place.home.write_text("HOME is a file here")


CASES = [
    # -- the config file itself (exit 2) ------------------------------------------------
    Case("config-missing", ("check",), 2, "no such file (create one with `livereview init`)",
         lambda place: None),
    Case("config-is-a-directory", ("check",), 2, "is a directory",
         lambda place: place.config.mkdir()),
    Case("config-not-utf8", ("check",), 2, "UTF-8", raw(b"[daemon]\npoll = '\xff\xfe'\n")),
    Case("config-binary", ("once",), 2, "UTF-8", raw(os.urandom(512))),
    Case("config-bad-toml", ("check",), 2, "invalid TOML", raw("[daemon\nx = 1\n")),
    Case("config-duplicate-key", ("check",), 2, "invalid TOML",
         raw('[ai]\nmodel = "a"\nmodel = "b"\n')),
    Case("config-empty", ("check",), 2, "no settings in the file", raw("")),
    Case("config-unknown-section", ("check",), 2, "unknown key",
         lambda place: place.write(place.text() + "\n[deamon]\nx = 1\n")),
    Case("config-via-env-missing", ("check",), 2, "no such file",
         lambda place: place.env.update(LIVEREVIEW_CONFIG=str(place.root / "nope.toml"))),
    # -- values (exit 2) ----------------------------------------------------------------
    Case("interval-not-a-number", ("check",), 2, "daemon.poll_interval_seconds",
         config(daemon='poll_interval_seconds = "often"')),
    Case("interval-negative", ("check",), 2, "daemon.poll_interval_seconds",
         config(daemon="poll_interval_seconds = -5")),
    Case("interval-absurd", ("run",), 2, "daemon.poll_interval_seconds",
         config(daemon="poll_interval_seconds = 99999999999999999999")),
    Case("interval-tiny", ("run",), 2, "daemon.hot_poll_interval_seconds",
         config(daemon="hot_poll_interval_seconds = 0.0001")),
    Case("log-format", ("check",), 2, "daemon.log_format", config(daemon='log_format = "xml"')),
    Case("metrics-listen-garbage", ("run",), 2, "daemon.metrics_listen",
         metrics_on("everywhere")),
    Case("database-url-scheme", ("once",), 2, "daemon.database_url",
         replaced('database_url = "', 'database_url = "mysql+')),
    Case("host-type", ("check",), 2, "hosts[0].type", replaced('"gitlab"', '"gitlub"')),
    Case("host-url-ftp", ("check",), 2, "hosts[0].url", config(gitlab="ftp://gitlab.example")),
    Case("ai-url-ftp", ("check",), 2, "ai.base_url",
         replaced('base_url = "http', 'base_url = "ftp')),
    Case("repo-unknown-host", ("check",), 2, "repos[0].host",
         replaced('host = "gl"\npath', 'host = "gh"\npath')),
    Case("repo-twice", ("check",), 2, "repos[1].path",
         config(repos=f'\n[[repos]]\nhost = "gl"\npath = "{PROJECT}"\n')),
    Case("ca-bundle-missing", ("check",), 2, "hosts[0].ca_bundle",
         config(host='token_env = "LIVEREVIEW_E2E_TOKEN"\nca_bundle = "/nonexistent/ca.pem"')),
    # -- secrets and the environment (exit 2) -------------------------------------------
    Case("token-variable-unset", ("once",), 2, "environment variable LIVEREVIEW_E2E_TOKEN",
         unset("LIVEREVIEW_E2E_TOKEN")),
    Case("token-variable-empty", ("once",), 2, "environment variable LIVEREVIEW_E2E_TOKEN",
         token_is("")),
    Case("token-with-a-line-break", ("check",), 2, "hosts[0].token_env",
         token_is("glpat-a\nb")),
    Case("token-file-missing", ("once",), 2, "hosts[0].token_file: cannot read",
         token_file(None)),
    Case("token-file-directory", ("once",), 2, "hosts[0].token_file: cannot read",
         token_file(None, directory=True)),
    Case("token-file-empty", ("once",), 2, "is empty", token_file(b"\n")),
    Case("token-file-not-utf8", ("once",), 2, "hosts[0].token_file", token_file(b"\xff\xfe")),
    Case("token-env-and-file", ("check",), 2, "not both",
         config(host='token_env = "LIVEREVIEW_E2E_TOKEN"\ntoken_file = "x"')),
    Case("ai-key-variable-unset", ("once",), 2, "ai.api_key_env",
         replaced('api_key_env = ""', 'api_key_env = "OPENAI_API_KEY"')),
    # -- usage (exit 2) -----------------------------------------------------------------
    Case("unknown-option", ("check", "--bogus"), 2, "unrecognized arguments: --bogus"),
    Case("bad-log-level", ("--log-level", "LOUD", "check"), 2, "argument --log-level"),
    Case("pending-unwatched-repo", ("pending", "--repo", "acme/typo"), 2,
         "not a watched repo"),
    Case("conversation-foreign-url", ("conversation", "https://elsewhere.example/a/b/-/"
                                      "merge_requests/1"), 2,
         "not a merge request of a configured host"),
    # -- the database (exit 1) ----------------------------------------------------------
    *(Case(f"database-garbage-{command}", (command,), 1,
           "is damaged (file is not a database", database("garbage"), "a garbage file")
      for command in ("once", "run", "pending", "health", "check")),
    *(Case(f"database-damaged-{command}", (command,), 1,
           "is damaged (database disk image is malformed", database("damaged"),
           "a damaged file")
      for command in ("once", "pending")),
    Case("database-is-a-directory", ("once",), 1, "is a directory, not a database file",
         database("directory"), "a directory in the file's place"),
    Case("database-is-a-directory-check", ("check",), 1, "is a directory, not a database",
         database("directory"), "a directory in the file's place"),
    Case("database-under-a-file", ("once",), 1, "database_url: cannot create",
         database("under a file"), "the file's directory is a file"),
    Case("database-newer-schema", ("once",), 1, "schema revision f00dfeed",
         database("newer"), "a newer schema written with sqlite3"),
    Case("database-newer-schema-pending", ("pending",), 1, "a newer version wrote it",
         database("newer"), "a newer schema written with sqlite3"),
    Case("database-locked", ("once",), 1, "database is locked", database("locked"),
         "SQLite's file write lock"),
    Case("database-read-only", ("once",), 1, "is read-only", database("read-only"),
         "the file on a read-only filesystem"),
    Case("home-is-a-file", ("once",), 1, "database_url: cannot create", home_is_a_file,
         "the default database path under $HOME"),
    # -- the network (exit 1) -----------------------------------------------------------
    Case("metrics-port-in-use", ("run",), 1, "daemon.metrics_listen: cannot listen on",
         port_in_use),
    Case("metrics-address-not-ours", ("run",), 1, "daemon.metrics_listen: cannot listen on",
         metrics_on("192.0.2.1:9464")),
    Case("host-refused", ("check",), 1, "refused the connection",
         lambda place: place.write(gitlab=place.servers.closed)),
    Case("host-unresolvable", ("check",), 1, "cannot resolve gitlab.invalid",
         config(gitlab="http://gitlab.invalid")),
    Case("host-answers-html", ("check",), 1, "answered, but not as its API does",
         lambda place: place.write(gitlab=place.servers.html)),
    Case("host-rejects-token", ("check",), 1, "token rejected (401)",
         token_is("glpat-" + "0" * 20)),
    Case("llm-unreachable", ("check",), 1, "unreachable: connection refused",
         lambda place: place.write(place.text().replace(place.servers.llm,
                                                        place.servers.closed + "/v1"))),
    Case("demo-llm-unreachable", ("demo", "--llm"), 1, "unreachable: connection refused",
         lambda place: place.write(place.text().replace(place.servers.llm,
                                                        place.servers.closed + "/v1"))),
]


class _LoginPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"<!DOCTYPE html><html><body>Sign in to continue</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    gitlab = FakeGitLab(token=TOKEN, rate_limit_per_minute=None)  # shared by every case
    gitlab.add_project(PROJECT)
    template = tmp_path_factory.mktemp("template") / "livereview.db"
    Store.open(f"sqlite:///{template}").close()
    html = ThreadingHTTPServer(("127.0.0.1", 0), _LoginPage)
    threading.Thread(target=html.serve_forever, daemon=True).start()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with FakeGitLabServer(gitlab) as server, FakeLLMServer() as llm:
        yield Servers(server.url, llm.url, f"http://127.0.0.1:{html.server_address[1]}",
                      closed, template)
    html.shutdown()
    html.server_close()


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@dataclass(frozen=True)
class Outcome:
    result: subprocess.CompletedProcess[str]
    created: set[str]
    removed: set[str]


def run_until_exit_or_started(command: list[str], cwd: Path, env: dict[str, str]
                              ) -> subprocess.CompletedProcess[str]:
    """Run `command` until it exits, or until it logs that its daemon started (then it is
    killed and its exit code is -1, which no case expects)."""
    process = subprocess.Popen(  # noqa: S603 - our own CLI
        command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    with ThreadPoolExecutor(max_workers=1) as reader:
        stdout = reader.submit(process.stdout.read)  # so a full pipe never blocks the CLI
        errors, started = [], False
        for line in process.stderr:
            errors.append(line)
            if STARTED in line and not started:
                started = True
                process.kill()
        process.wait()
        stderr = "".join(errors)
        if started:
            return subprocess.CompletedProcess(command, -1, stdout.result(),
                                               f"(the daemon started: killed) {stderr}")
        return subprocess.CompletedProcess(command, process.returncode, stdout.result(), stderr)


def run_case(case: Case, root: Path, servers: Servers) -> Outcome:
    place = Place(root, servers)
    root.mkdir()
    place.home.mkdir()
    place.env = {k: v for k, v in os.environ.items()
                 if not k.startswith(("LIVEREVIEW_", "OPENAI_", "STATE_DIRECTORY",
                                      "CREDENTIALS_DIRECTORY", "NOTIFY_SOCKET"))}
    place.env.update(HOME=str(place.home), LIVEREVIEW_E2E_TOKEN=TOKEN, PYTHONUNBUFFERED="1")
    cleanup = case.setup(place)
    before = tree(root)
    args = ("--config", str(place.config)) if "LIVEREVIEW_CONFIG" not in place.env else ()
    command = [sys.executable, "-m", "livereview", *args, *case.args]
    try:
        result = run_until_exit_or_started(command, root, place.env)
    finally:
        after = tree(root)  # before the cleanup, which may remove what the setup made
        if cleanup is not None:
            cleanup()
    return Outcome(result, after - before, before - after)


def test_there_are_at_least_forty_cases() -> None:
    assert len(CASES) >= 40
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [
    pytest.param(case, id=case.id, marks=[pytest.mark.sqlite_only(case.sqlite_only)]
                 if case.sqlite_only else []) for case in CASES])
def test_a_broken_world_is_one_line_the_right_exit_code_and_nothing_created(
        case: Case, servers: Servers, tmp_path: Path) -> None:
    # One case a test: a module fixture running every case ran them all again on each
    # xdist worker that got one (loadgroup did not keep the module on one worker).
    outcome = run_case(case, tmp_path / case.id, servers)
    result = outcome.result
    shown = f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert "Traceback" not in result.stderr + result.stdout, shown
    assert result.returncode == case.code, shown
    if case.args[0] == "check" and case.code == 1:  # a report on stdout, nothing on stderr
        assert result.stderr == "", shown
        [failed] = [line for line in result.stdout.splitlines() if " FAIL " in line]
        assert case.says in failed, shown
    else:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1, shown
        assert lines[0].startswith("livereview"), shown
        assert case.says in lines[0], shown
    assert (outcome.created, outcome.removed) == (set(), set()), shown
