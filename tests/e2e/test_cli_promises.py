"""The README's promise for every failure — one line on stderr, the right exit code, never a
traceback, never a log line on stdout — kept where it was broken: `init` onto a directory or
into a missing folder, output cut short by `| head`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from livereview.cli import main
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

