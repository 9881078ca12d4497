"""Numbers on the command line: an id, a timeout, an age out of range is bad input — one
line naming the argument, exit 2 — never an internal error from the database (SQLite holds
64-bit integers: a 23-digit id raised OverflowError, exit 1) nor a wait that never ends
(`--timeout nan`). Found by an attack session."""

from __future__ import annotations

import pytest

from livereview.cli import main

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
