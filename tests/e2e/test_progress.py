"""Long work shows progress to a person at a terminal and nothing to a script
(cli/progress.py): with stderr a pseudo-terminal, rich bars appear there and stdout is the
command's output alone; with pipes, or `CI` set, nothing extra at all. The daemon's own
progress through a big first sweep is a log line every SWEEP_LOG_EVERY MRs."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from livereview.app.daemon import App
from livereview.core.model import Lesson
from livereview.metrics import Metrics
from livereview.settings import load
from livereview.store import lessons as lesson_rows
from livereview.store.db import Store
from livereview.sync import mr_syncs
from tests.e2e.conftest import PROJECT
from tests.e2e.test_first_sight import BigGitLab, big  # noqa: F401 - the fixture
from tests.local_repo import review_repo

ESC = "\x1b["  # a terminal control sequence: what only a bar draws


def run(argv: list[str], *, terminal: bool, ci: bool = False, cwd: Path | None = None,
        env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The CLI with stdout a pipe and stderr a pseudo-terminal (or a pipe): exit code,
    stdout, what stderr showed."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("CI", "LIVEREVIEW_CONFIG", "OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL")}
    base.update({"TERM": "xterm-256color", "COLUMNS": "100", **(env or {})})
    if ci:
        base["CI"] = "true"
    command = [sys.executable, "-m", "livereview", *argv]
    if not terminal:
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=base,  # noqa: S603
                              check=False, timeout=600)
        return done.returncode, done.stdout, done.stderr
    leader, follower = pty.openpty()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=follower,  # noqa: S603
                          stdin=subprocess.DEVNULL, cwd=cwd, env=base) as process:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the process closed the terminal's last descriptor
                break
            if not chunk:
                break
            shown += chunk
        assert process.stdout is not None
        out = process.stdout.read().decode("utf-8")
        code = process.wait()
    os.close(leader)
    return code, out, shown.decode("utf-8", "replace")


def _source(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'source.db'}"
    store = Store.open(url)
    try:
        store.transaction(lesson_rows.import_, [
            Lesson(key=f"lesson {n}", value="v", scope="global") for n in range(3)],
            datetime.now().astimezone())
    finally:
        store.close()
    return url


def test_db_copy_draws_its_tables_on_a_terminal_and_stdout_stays_the_report(
        tmp_path: Path) -> None:
    source = _source(tmp_path)
    code, out, shown = run(["db", "copy", "--from", source, "--to",
                            f"sqlite:///{tmp_path / 'a.db'}"], terminal=True)
    assert code == 0, shown
    assert out.startswith("copied ") and out.count("\n") == 1 and ESC not in out
    assert "ai_memory" in shown and "3/3" in shown and ESC in shown


@pytest.mark.parametrize("ci", [False, True])
def test_db_copy_shows_nothing_extra_without_a_terminal_or_under_ci(
        tmp_path: Path, ci: bool) -> None:
    source = _source(tmp_path)
    code, out, err = run(["db", "copy", "--from", source, "--to",
                          f"sqlite:///{tmp_path / 'b.db'}"], terminal=ci, ci=ci)
    assert code == 0
    assert out.startswith("copied ") and out.count("\n") == 1
    assert err.strip() == ""


def test_a_local_review_request_shows_its_range_being_read_on_a_terminal_only(
        tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    argv = ["review", "request", "HEAD~1", "--title", "T"]
    code, out, shown = run(argv, terminal=True, cwd=repo.path)
    assert code == 0, shown
    assert out.startswith("review 1: T") and ESC not in out
    assert "reading HEAD~1" in shown and "8/8" in shown
    code, out, err = run(argv, terminal=False, cwd=repo.path)
    assert code == 0 and out.startswith("review 2: T")
    assert [line for line in err.splitlines() if "no AI settings" not in line] == []


def test_once_draws_a_big_first_sweep_on_a_terminal_only(big: BigGitLab) -> None:  # noqa: F811
    big.add_mrs(12, days_ago=0.5)
    big.config.write_text(big.config.read_text().replace('log_format = "json"',
                                                         'log_format = "console"'))
    argv = ["--config", str(big.config), "once"]
    env = {"LIVEREVIEW_E2E_TOKEN": os.environ["LIVEREVIEW_E2E_TOKEN"]}
    code, out, shown = run(argv, terminal=True, env=env)
    assert code == 0, shown
    assert out == ""
    assert "gl: merge requests" in shown and "12/12" in shown
    big.add_mrs(12, days_ago=0.5)
    code, out, err = run(argv, terminal=False, env=env)
    assert (code, out) == (0, "")
    assert "merge requests" not in err and ESC not in err


async def test_the_daemon_logs_a_big_sweep_s_progress_every_n_mrs(
        big: BigGitLab, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setattr(mr_syncs, "SWEEP_LOG_EVERY", 5)
    big.add_mrs(12, days_ago=0.5)
    app = App.create(load(big.config), metrics=Metrics())
    try:
        with capture_logs() as logs:
            report = (await app.cycle(cold=True))["gl"]
    finally:
        await app.close()
    assert report.fetched == 12
    said = [(e["done"], e["mrs"]) for e in logs if e["event"] == "poll_sweep_progress"]
    assert said == [(5, 12), (10, 12), (12, 12)]


def test_a_hosted_review_draws_the_files_read_on_a_terminal_only(
        big: BigGitLab) -> None:  # noqa: F811
    [first, second] = big.add_mrs(2)
    env = {"LIVEREVIEW_E2E_TOKEN": os.environ["LIVEREVIEW_E2E_TOKEN"]}
    code, out, shown = run(["--config", str(big.config), "review", f"gl:{PROJECT}!{first}"],
                           terminal=True, env=env)
    assert code == 0, shown
    assert out.startswith("verdict: ") and ESC not in out
    assert "reading the diff: files" in shown and ESC in shown
    code, out, err = run(["--config", str(big.config), "review", f"gl:{PROJECT}!{second}"],
                         terminal=False, env=env)
    assert code == 0 and out.startswith("verdict: ")
    assert "reading the diff" not in err and ESC not in err
