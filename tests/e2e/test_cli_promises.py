"""The README's promise for every failure — one line on stderr, the right exit code, never a
traceback, never a log line on stdout — kept where it was broken: `init` onto a directory or
into a missing folder, output cut short by `| head`."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from mcp import Client

from livereview.app.wiring import open_toolbox
from livereview.cli.commands import main
from livereview.mcp.server import build
from livereview.settings import load
from tests.e2e.conftest import PROJECT, TOKEN, Daemon, Sandbox, wait_for
from tests.local_repo import Repo


def test_init_onto_a_directory_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for extra in ((), ("--force",)):
        assert main(["init", str(tmp_path), *extra]) == 2
        out, err = capsys.readouterr()
        assert out == ""
        assert err.count("\n") == 1
        assert f"livereview: init: {tmp_path} is a directory" in err


def test_init_into_a_missing_folder_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "nowhere" / "livereview.toml"
    assert main(["init", str(target)]) == 2
    out, err = capsys.readouterr()
    assert (out, err.count("\n")) == ("", 1)
    assert f"{tmp_path / 'nowhere'} does not exist" in err
    assert not target.parent.exists()


def test_init_under_a_file_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    assert main(["init", str(tmp_path / "file" / "livereview.toml")]) == 2
    out, err = capsys.readouterr()
    assert (out, err.count("\n")) == ("", 1)
    assert "is not a folder" in err


def test_output_cut_short_by_head_ends_quietly_as_sigpipe_would(tmp_path: Path) -> None:
    """`review show 1 | head -1`: far more output than a pipe holds, the reader gone after
    one line. Python's advice (docs: signal, "Note on SIGPIPE"): no message, and the exit
    status a shell shows for a writer killed by SIGPIPE (141)."""
    repo = Repo(tmp_path / "r")
    repo.commit("base", README_DOT_md="hello\n")
    repo.commit("many", big_DOT_py="".join(f"x{i} = {i}  # TODO: item {i} {'y' * 60}\n"
                                           for i in range(400)))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LIVEREVIEW_", "OPENAI_"))}
    made = subprocess.run(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "review", "request", "HEAD~1", "--title", "t",
         "--repo", str(repo.path)], capture_output=True, text=True, env=env, check=False,
        timeout=120)
    assert made.returncode == 0, made.stderr
    show = subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "review", "show", "1", "--repo", str(repo.path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert show.stdout is not None and show.stderr is not None
    assert show.stdout.readline().startswith(b"review 1: t")
    show.stdout.close()  # as `head -1` exits
    err = show.stderr.read().decode()
    assert show.wait(timeout=120) == 128 + signal.SIGPIPE, err
    assert err == ""



def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line, in a process of its own: what a user's shell sees."""
    return subprocess.run(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", *args], capture_output=True, text=True,
        input=stdin, check=False, timeout=120, env={**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN})


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    shown = f"exit {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
    assert "Traceback" not in result.stdout + result.stderr, shown
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("livereview"), shown
    return lines[0]


def test_mr_file_on_a_missing_path_is_one_line_on_stderr_and_nothing_on_stdout(
        sandbox: Sandbox) -> None:
    done = cli("--config", str(sandbox.config), "mr", "file", f"gl:{PROJECT}!{sandbox.iid}",
               "no/such/file.py")
    line = one_line(done)
    assert done.returncode == 2 and done.stdout == ""
    assert "file on gl:acme/widgets!1: not found" in line


def test_a_postgresql_connection_error_is_one_line_without_the_password(
        capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql+psycopg://bot:hunter2-SECRET@127.0.0.1:{port}/livereview"
    assert main(["db", "migrate", "--url", url]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert "livereview: db migrate: database postgresql+psycopg://bot:***@127.0.0.1" in err
    assert "Connection refused" in err and "hunter2" not in err


def test_migrate_url_refuses_a_missing_sqlite_file_unless_asked_to_create_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    typo = tmp_path / "livereveiw.db"
    assert main(["db", "migrate", "--url", f"sqlite:///{typo}"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert f"--url: no database at {typo} (add --create to create it)" in err
    assert list(tmp_path.iterdir()) == []
    assert main(["db", "migrate", "--url", f"sqlite:///{typo}", "--create"]) == 0
    assert capsys.readouterr().out == f"sqlite:///{typo}: schema is current\n"
    assert main(["db", "migrate", "--url", f"sqlite:///{typo}"]) == 0  # it exists now


def started(daemon: Daemon) -> bool:
    return "daemon_started" in daemon.output()


@pytest.mark.timeout(400)
def test_run_exits_130_on_ctrl_c_and_0_on_sigterm(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 0)):
        daemon = start_daemon()
        wait_for(partial(started, daemon), timeout=180)
        assert daemon.stop(sig, timeout=180) == code, daemon.output()
        assert "Traceback" not in daemon.output()


def test_an_mcp_call_with_a_missing_or_wrong_argument_is_one_line_naming_it(
        sandbox: Sandbox) -> None:
    mr = f"gl:{PROJECT}!{sandbox.iid}"

    async def calls() -> list[str]:
        settings = load(sandbox.config)
        box = open_toolbox(settings)
        try:
            async with Client(build(box, settings)) as client:
                answers = [await client.call_tool("file", {"mr": mr}),
                           await client.call_tool("comment", {"mr": mr, "body": "x",
                                                              "path": "a.py", "line": "ten"}),
                           await client.call_tool("reply", {})]
        finally:
            await box.close()
        assert all(a.is_error for a in answers)
        return ["".join(getattr(c, "text", "") for c in a.content) for a in answers]

    missing, wrong, nothing = asyncio.run(calls())
    assert missing == "file: missing argument path"
    assert wrong.startswith("comment: argument line: ") and "integer" in wrong
    assert nothing == ("reply: missing argument mr; missing argument comment_id; "
                       "missing argument body")
    for text in (missing, wrong, nothing):
        assert "\n" not in text and "http" not in text and "ten" not in text


def test_an_argument_that_is_not_utf8_is_refused_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Bytes that are not UTF-8 reach Python as lone surrogates (PEP 383), which no host,
    database or terminal encoder takes: refused before any of them, exit 2."""
    undecodable = os.fsdecode(b"gl:acme/\xff!1")
    assert main(["mr", "diff", undecodable]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "livereview: argument b'gl:acme/\\xff!1' is not UTF-8 text" in err
