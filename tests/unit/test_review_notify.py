"""The notifiers: the command gets the event on stdin, the URL a POST of the same JSON;
a failure is one line, never silence; settings validate review_on."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx2
import pytest

from livereview.review.notify import CommandNotifier, HttpNotifier, Json, NotifyFailed
from livereview.settings import RepoSettings, ReviewSettings

EVENT: dict[str, Json] = {"event": "review.changes_requested", "review": {"id": "abc"},
         "findings": [{"body": "red \x1b[31malert\x1b[0m\x07"}]}


async def test_the_url_gets_the_cleaned_event_as_json() -> None:
    seen: list[bytes] = []

    def handle(request: httpx2.Request) -> httpx2.Response:
        seen.append(request.content)
        return httpx2.Response(204)

    await HttpNotifier("http://hook.internal/x", 5, httpx2.MockTransport(handle)).deliver(EVENT)
    assert json.loads(seen[0])["findings"][0]["body"] == "red alert"


async def test_an_http_error_fails_the_notifier() -> None:
    transport = httpx2.MockTransport(lambda _: httpx2.Response(503))
    with pytest.raises(NotifyFailed, match="HTTP 503"):
        await HttpNotifier("http://hook.internal/x", 5, transport).deliver(EVENT)


async def test_the_command_gets_the_event_on_stdin(tmp_path: Path) -> None:
    out = tmp_path / "got.json"
    script = f"import sys, pathlib; pathlib.Path({str(out)!r}).write_text(sys.stdin.read())"
    await CommandNotifier((sys.executable, "-c", script), 10).deliver(EVENT)
    assert json.loads(out.read_text())["review"]["id"] == "abc"


async def test_a_failing_or_missing_command_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(NotifyFailed, match="exited with 4"):
        await CommandNotifier((sys.executable, "-c", "raise SystemExit(4)"), 10).deliver(EVENT)
    with pytest.raises(NotifyFailed, match="could not start"):
        await CommandNotifier((str(tmp_path / "nope"),), 10).deliver(EVENT)
    with pytest.raises(NotifyFailed, match="did not finish within 1s"):
        await CommandNotifier((sys.executable, "-c", "import time; time.sleep(30)"),
                              1).deliver(EVENT)


def test_review_settings_validate() -> None:
    assert RepoSettings(host="gl", path="a/b", review_on=("opened", "push")).review_on == (
        "opened", "push")
    with pytest.raises(ValueError, match="opened, push"):
        RepoSettings(host="gl", path="a/b", review_on=("merged",))
    with pytest.raises(ValueError, match="critical, warning, suggestion"):
        ReviewSettings(changes_requested_on=("blocker",))
