"""Log format: readable lines on a terminal and on journald, JSON lines otherwise."""

from __future__ import annotations

import io
import json

import pytest
import structlog

from livereview import log_setup as logs


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def emit(stream: io.StringIO, log_format: str = "auto") -> str:
    logs.configure(log_format, stream=stream)
    structlog.get_logger("t").info("replied", job_id=7, host="gl")
    return stream.getvalue()


def test_json_lines_off_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    event = json.loads(emit(io.StringIO()))
    assert (event["event"], event["job_id"], event["level"]) == ("replied", 7, "info")


def test_readable_lines_on_journald(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JOURNAL_STREAM", "8:12345")
    line = emit(io.StringIO())
    assert not line.startswith("{")
    assert "replied" in line and "job_id=7" in line
    assert "\x1b[" not in line  # no colour codes in the journal


def test_readable_lines_on_a_terminal_and_json_when_asked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    assert "job_id" in emit(Tty()) and not emit(Tty()).startswith("{")
    assert json.loads(emit(Tty(), "json"))["event"] == "replied"


DEFERRED = """
import sys
from livereview import log_setup
log_setup.configure("json", ["glpat-deferred-secret"], level="WARNING")
loaded_at_configure = "structlog" in sys.modules
import structlog
structlog.get_logger("t").info("quiet")
structlog.get_logger("t").warning("leaked", token="glpat-deferred-secret")
print(loaded_at_configure, "rich" in sys.modules)
"""


def test_a_configuration_given_before_structlog_is_loaded_applies_when_it_is() -> None:
    """`health` and `pending` log nothing, so they start without structlog (bench figure
    17): the level, the format and the redaction wait for the first module that logs."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", DEFERRED], capture_output=True,  # noqa: S603
                          text=True, check=True, timeout=120)
    assert done.stdout.split() == ["False", "False"]  # not loaded early; rich never
    [line] = done.stderr.splitlines()  # the INFO line is under the level
    event = json.loads(line)
    assert (event["event"], event["level"], event["token"]) == ("leaked", "warning", "***")
