"""CLI fuzz, part two: every subcommand (test_cli_fuzz.py holds the config, database and
network cases of the daemon's commands, each with its exact message).

Here each subcommand meets each broken world — a garbage config, a garbage database, a
dead host — plus bad ids, odd unicode and undecodable bytes in its arguments, a reader
that closes stdout at once, and signals while it runs. The promise checked is the README's
for every one of them: an expected exit code, at most one line on stderr and never a
traceback, and no log line on stdout.

Robust on a loaded machine: a case waits for its process's own output or exit (generous
timeouts, no sleeps); nothing asserts how long anything took.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from livereview.cli.commands import parser
from tests.e2e.conftest import PROJECT, TOKEN
from tests.e2e.test_cli_fuzz import Place, Servers, database
from tests.e2e.test_cli_fuzz import servers as servers  # the shared fakes (a fixture)

# every case is a fresh interpreter, four at a time. The module fixture runs every case
# selected in the session, on each worker that runs one: one worker runs them all
# (`--dist loadgroup`), or each worker would run the whole sweep again.
pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("cli_fuzz_commands"),
              pytest.mark.creates_database("each case's world holds its own database or none")]
WAIT_SECONDS = 300  # for a process to exit or say something: generous, never asserted

MR = f"gl:{PROJECT}!1"
MR_URL = "http://gitlab.invalid/acme/widgets/-/merge_requests/1"
# Every subcommand, with arguments that reach its work (not only its argument parser).
COMMANDS: dict[str, tuple[str | bytes, ...]] = {
    "check": ("check",),
    "once": ("once",),
    "pending": ("pending", "--json"),
    "conversation": ("conversation", MR_URL),
    "health": ("health",),
    "lessons-list": ("lessons", "list"),
    "lessons-approve": ("lessons", "approve", "1"),
    "lessons-export": ("lessons", "export", "--format", "json"),
    "db-migrate": ("db", "migrate"),
    "mr-comments": ("mr", "comments", MR),
    "mr-diffstat": ("mr", "diffstat", MR),
    "mr-diff": ("mr", "diff", MR, "--context", "2"),
    "mr-file": ("mr", "file", MR, "src/cache.py"),
    "mr-comment": ("mr", "comment", MR, "--body", "hi", "--path", "a.py", "--line", "1"),
    "mr-reply": ("mr", "reply", MR, "1", "--body", "x"),
    "mr-approve": ("mr", "approve", MR),
    "mr-replied": ("mr", "replied", "--since", "2020-01-01"),
    "review-mr": ("review", MR),
    "review-show": ("review", "show", "1"),  # the case's folder is no git repository
    "review-list": ("review", "list"),
    "review-reply": ("review", "reply", "1", "1", "--body", "x"),
    "review-request": ("review", "request", "HEAD~1", "--title", "t"),
    "mcp": ("mcp",),  # stdin is closed: the server ends
}
DAEMON = ("run", "once", "demo")  # commands whose stderr is a log, not one line
GARBAGE = b"\x00\xff[[hosts]]\n\xfe = \xc3(\n" * 40


def garbage_config(place: Place) -> None:
    place.write(GARBAGE)


def dead_host(place: Place) -> None:
    place.write(gitlab=place.servers.closed)
    place.with_database()


def healthy(place: Place) -> None:
    place.write()
    place.with_database()


WORLDS: dict[str, Callable[[Place], object]] = {
    "garbage-config": garbage_config,
    "garbage-database": database("garbage"),
    "dead-host": dead_host,
}


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str | bytes, ...]
    setup: Callable[[Place], object] = healthy
    codes: frozenset[int] = frozenset({0, 1, 2})
    close_stdout: bool = False  # a reader gone before the first byte (`| head -0`)
    signal_after: str = ""  # send `signum` once stdout or stderr shows this
    signum: int = signal.SIGINT


CASES = [
    *(Case(f"{command}-{world}", args, setup)
      for command, args in COMMANDS.items() for world, setup in WORLDS.items()),
    # -- init needs no config ------------------------------------------------------------
    Case("init-missing-folder", ("init", "nowhere/livereview.toml"), codes=frozenset({2})),
    Case("init-onto-a-directory", ("init", "."), codes=frozenset({2})),
    Case("init-onto-a-directory-forced", ("init", ".", "--force"), codes=frozenset({2})),
    Case("init-odd-name", ("init", "\u202econfig\u200b.toml"), codes=frozenset({0})),
    Case("init-undecodable-name", ("init", b"nowhere\xff/x.toml"), codes=frozenset({2})),
    # -- bad ids and odd unicode ---------------------------------------------------------
    Case("lessons-id-zero", ("lessons", "approve", "0"), codes=frozenset({2})),
    Case("lessons-id-huge", ("lessons", "reject", "9" * 40), codes=frozenset({2})),
    Case("review-id-negative", ("review", "show", "-1"), codes=frozenset({2})),
    Case("review-id-text", ("review", "resolve", "1", "x"), codes=frozenset({2})),
    Case("mr-reply-id-odd", ("mr", "reply", MR, "\u202e1", "--body", "x")),
    Case("mr-ref-rtl", ("mr", "comments", "gl:\u202eacme/widgets!1"), codes=frozenset({2})),
    Case("mr-ref-undecodable", ("mr", "diff", b"gl:acme/\xff!1"), codes=frozenset({2})),
    Case("mr-file-undecodable", ("mr", "file", MR, b"src/\xff.py")),
    Case("mr-line-zero", ("mr", "comment", MR, "--body", "x", "--path", "a", "--line", "0"),
         codes=frozenset({2})),
    Case("conversation-not-a-url", ("conversation", "not \u2028 a \u200b url"),
         codes=frozenset({2})),
    Case("pending-repo-odd", ("pending", "--repo", "\u202eacme/widgets"), codes=frozenset({2})),
    Case("health-max-age-nan", ("health", "--max-age", "nan"), codes=frozenset({2})),
    Case("db-copy-same", ("db", "copy", "--from", "sqlite:///a.db", "--to", "sqlite:///a.db"),
         codes=frozenset({2})),
    Case("db-migrate-url-garbage", ("db", "migrate", "--url", "\U0001f4a9://x"),
         codes=frozenset({2})),
    Case("review-range-odd", ("review", "request", "\u202eHEAD", "--title", "t")),
    Case("review-update-no-range", ("review", "update", "1"), codes=frozenset({2})),
    Case("review-update-range-twice", ("review", "update", "1", "HEAD", "--range", "HEAD~1"),
         codes=frozenset({2})),
    Case("review-update-range-odd", ("review", "update", "1", "\u202eHEAD~1")),
    Case("review-thread-huge", ("review", "reply", "1", "9" * 40, "--body", "x"),
         codes=frozenset({2})),
    Case("unknown-command", ("frobnicate",), codes=frozenset({2})),
    # -- web serves until stopped: only its refusals, before it binds ---------------------
    Case("web-listen-exposed", ("web", "--listen", "0.0.0.0:8470"), codes=frozenset({2})),
    Case("web-listen-garbage", ("web", "--listen", "\u202enowhere"), codes=frozenset({2})),
    # -- stdout closed before the first byte: quiet, 0 or 141 (128 + SIGPIPE) --------------
    *(Case(f"pipe-closed-{name}", args, close_stdout=True,
           codes=frozenset({0, 1, 2, 128 + signal.SIGPIPE}))
      for name, args in (("help", ("--help",)), ("check", ("check",)),
                         ("pending", ("pending", "--json")), ("health", ("health",)),
                         ("lessons-export", ("lessons", "export")),
                         ("mr-diffstat", ("mr", "diffstat", MR)),
                         ("db-migrate", ("db", "migrate")), ("init", ("init", "new.toml")))),
    # -- signals while running -----------------------------------------------------------
    Case("run-sigint", ("run",), codes=frozenset({130}), signal_after="daemon_started"),
    Case("run-sigterm", ("run",), codes=frozenset({0}), signal_after="daemon_started",
         signum=signal.SIGTERM),
    Case("demo-sigint", ("demo",), codes=frozenset({0, 130}), signal_after="\n"),
    Case("demo-sigterm", ("demo",), codes=frozenset({0, 128 + signal.SIGTERM}),
         signal_after="\n", signum=signal.SIGTERM),
    Case("sandbox-sigint", ("sandbox",), codes=frozenset({130}), signal_after="\n"),
    Case("sandbox-sigterm", ("sandbox", "--chatter"), codes=frozenset({0}),
         signal_after="\n", signum=signal.SIGTERM),
    # -- sandbox: its own options --------------------------------------------------------
    Case("sandbox-chatter-zero", ("sandbox", "--chatter", "--chatter-seconds", "0"),
         codes=frozenset({2})),
    Case("sandbox-dir-is-a-file", ("sandbox", "--dir", "livereview.toml"),
         codes=frozenset({2})),
]

# A structlog line in either renderer: JSON with an event, or "2026-…Z [info     ] event".
_CONSOLE_LOG = re.compile(r"^\S*\d{4}-\d\d-\d\dT[\d:.]+Z?\S* \[\s*\S*(debug|info|warn|error)")


def is_log_line(line: str) -> bool:
    if _CONSOLE_LOG.match(line):
        return True
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and "event" in record and "level" in record


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


def _start(case: Case, place: Place) -> subprocess.Popen[bytes]:
    args = ("--config", str(place.config)) if case.args[0] != "init" else ()
    return subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", *args, *case.args], cwd=place.root,
        env=place.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE)


def _signalled(case: Case, process: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    """Read the merged output until the case's cue, send the signal, collect the rest."""
    assert process.stdout is not None and process.stderr is not None
    seen: list[bytes] = []
    stream = process.stderr if case.signal_after != "\n" else process.stdout
    while case.signal_after.encode() not in b"".join(seen):
        chunk = stream.readline()
        assert chunk, f"exited before {case.signal_after!r}: {b''.join(seen)!r}"
        seen.append(chunk)
    process.send_signal(case.signum)
    out, err = process.communicate(timeout=WAIT_SECONDS)
    return (out, b"".join(seen) + err) if stream is process.stderr else (
        b"".join(seen) + out, err)


def run_case(case: Case, root: Path, servers: Servers) -> Outcome:
    place = Place(root, servers)
    root.mkdir()
    place.home.mkdir()
    place.env = {k: v for k, v in os.environ.items()
                 if not k.startswith(("LIVEREVIEW_", "OPENAI_", "STATE_DIRECTORY",
                                      "CREDENTIALS_DIRECTORY", "NOTIFY_SOCKET"))}
    place.env.update(HOME=str(place.home), LIVEREVIEW_E2E_TOKEN=TOKEN, PYTHONUNBUFFERED="1")
    case.setup(place)
    process = _start(case, place)
    try:
        if case.signal_after:
            out, err = _signalled(case, process)
        elif case.close_stdout:
            assert process.stdout is not None
            process.stdout.close()
            err = process.communicate(timeout=WAIT_SECONDS)[1]
            out = b""
        else:
            out, err = process.communicate(timeout=WAIT_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return Outcome(process.returncode, out.decode("utf-8", "replace"),
                   err.decode("utf-8", "replace"))


def _result(case: Case, place: Path, servers: Servers) -> Outcome:
    """A case the harness could not run fails with why, as a case."""
    try:
        return run_case(case, place, servers)
    except (OSError, ValueError, AssertionError, subprocess.SubprocessError) as exc:
        return Outcome(-1, "", f"the harness failed: {exc!r}")


def test_every_subcommand_is_in_the_sweep() -> None:
    commands = {name.split("-")[0] for name in COMMANDS} | {"init", "run", "demo", "web", "sandbox"}
    choices = next(a for a in parser()._actions if a.dest == "command").choices
    assert isinstance(choices, dict)
    assert set(choices) <= commands, set(choices) - commands
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", [pytest.param(case, id=case.id) for case in CASES])
def test_a_subcommand_in_a_broken_world_keeps_the_cli_s_promises(
        case: Case, servers: Servers, tmp_path: Path) -> None:
    # One case a test: a module fixture running every selected case ran them all again on
    # each xdist worker that got one (loadgroup did not keep the module on one worker).
    outcome = _result(case, tmp_path / case.id, servers)
    shown = f"exit {outcome.code}\nstdout: {outcome.stdout}\nstderr: {outcome.stderr}"
    assert "Traceback" not in outcome.stdout + outcome.stderr, shown
    assert outcome.code in case.codes, shown
    logs = [line for line in outcome.stdout.splitlines() if is_log_line(line)]
    assert logs == [], shown
    if case.signal_after or case.args[0] in DAEMON:
        return  # the daemon's stderr is its log, by design (`once`: "the log lines above")
    assert len(outcome.stderr.splitlines()) <= 1, shown
    assert "Broken pipe" not in outcome.stderr and "Errno 32" not in outcome.stderr, shown
    if outcome.code != 0 and outcome.stderr:
        assert outcome.stderr.startswith("livereview"), shown
