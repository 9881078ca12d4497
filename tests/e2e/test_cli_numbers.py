"""Numbers on the command line: an id, a timeout, an age out of range is bad input — one
line naming the argument, exit 2 — never an internal error from the database (SQLite holds
64-bit integers: a 23-digit id raised OverflowError, exit 1) nor a wait that never ends
(`--timeout nan`). Found by an attack session."""

from __future__ import annotations

import pytest

from livereview.cli.commands import main
from tests.e2e.conftest import PROJECT, Sandbox
from tests.e2e.test_tools_daemon import enable_writes

HUGE = "99999999999999999999999"


@pytest.mark.parametrize(("argv", "argument"), [
    (["review", "show", HUGE], "argument id: expected an id from 1 to"),
    (["review", "reply", "1", HUGE, "text"], "argument thread: expected an id"),
    (["review", "resolve", "1", "0"], "argument thread: expected an id"),
    (["lessons", "approve", HUGE], "argument id: expected an id"),
    (["lessons", "show", "-3"], "argument id: expected an id"),
    (["review", "wait", "1", "--timeout", "nan"], "argument --timeout: expected seconds"),
    (["review", "wait", "1", "--timeout", "inf"], "argument --timeout: expected seconds"),
    (["health", "--max-age", "-1"], "argument --max-age: expected seconds"),
    (["review", "show", "1e3"], "argument id: expected a whole number"),
])
def test_a_number_out_of_range_is_one_line_and_exit_2(
        argv: list[str], argument: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    err = capsys.readouterr().err.strip()
    assert exited.value.code == 2
    assert len(err.splitlines()) == 1 and argument in err, err


def test_mr_dates_and_line_numbers_out_of_range_are_bad_input(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    """`mr replied --since 0001-01-01` was an internal error (a year-0 ValueError), and
    `mr comment --line 99999999999999999999` reached the host (HTTP 400, exit 1)."""
    enable_writes(sandbox)
    config = ["--config", str(sandbox.config), "mr"]
    assert main([*config, "replied", "--since", "0001-01-01"]) == 2
    assert "expected an ISO 8601 date or time from 1970 on" in capsys.readouterr().err
    assert main([*config, "comment", f"gl:{PROJECT}!{sandbox.iid}", "--path", "src/cache.py",
                 "--line", HUGE, "--body", "hi"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "expected a line number from 1 to 10000000" in err, err
    assert sandbox.bot_notes() == []
