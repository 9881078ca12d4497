"""Notification on "changes requested": the configured command gets the event once, with
the review's id, before the run is done; a failing notifier leaves the run retryable and
the retry posts nothing twice; reviewer text reaches it without control characters."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from tests.databases import query
from tests.e2e.conftest import Sandbox
from tests.e2e.test_review_crash import EXPECTED, gitlab_parts, reviews_due, run_state
from tests.e2e.test_review_followup import with_review_config
from tests.e2e.test_review_gitlab import FINDINGS

# Appends its stdin as one line to OUT; fails (exit 3) while the file FAIL exists.
NOTIFIER = """
import pathlib, sys
out, fail = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
data = sys.stdin.read()
if fail.exists():
    sys.exit(3)
with out.open("a", encoding="utf-8") as f:
    f.write(data.replace("\\n", " ") + "\\n")
"""
HOSTILE = dict(FINDINGS["src/cache.py"][0],
               body="Terminal \x1b[31mred\x1b[0m\x07 bell\x1b]0;owned\x07 and \u202eevil\n\nx")


def configure(sandbox: Sandbox, tmp_path: Path) -> tuple[Path, Path]:
    script, out, fail = tmp_path / "notify.py", tmp_path / "events.jsonl", tmp_path / "fail"
    script.write_text(NOTIFIER, encoding="utf-8")
    command = json.dumps([sys.executable, str(script), str(out), str(fail)])
    with_review_config(sandbox, review=f"notify_command = {command}\n")
    text = sandbox.config.read_text(encoding="utf-8").replace(
        "[daemon]\n", "[daemon]\nretry_base_seconds = 0.05\n", 1)
    sandbox.config.write_text(text, encoding="utf-8")
    return out, fail


def events(out: Path) -> list[dict[str, object]]:
    if not out.exists():
        return []
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def token(sandbox: Sandbox) -> str:
    return str(query(sandbox.db, "SELECT token FROM review_runs")[0][0])


def test_the_notifier_runs_once_with_the_review_id(sandbox: Sandbox, tmp_path: Path) -> None:
    out, _ = configure(sandbox, tmp_path)
    sandbox.llm.llm.review_findings = FINDINGS
    sandbox.note("@livereview review")
    assert sandbox.once() == 0
    [event] = events(out)
    assert event["event"] == "review.changes_requested"
    review = event["review"]
    assert isinstance(review, dict) and review["id"] == token(sandbox)
    assert review["verdict"] == "changes_requested"
    assert sandbox.once() == 0
    assert len(events(out)) == 1


def test_a_failing_notifier_leaves_the_run_retryable_and_the_retry_posts_nothing_twice(
        sandbox: Sandbox, tmp_path: Path) -> None:
    out, fail = configure(sandbox, tmp_path)
    fail.touch()
    sandbox.llm.llm.review_findings = FINDINGS
    sandbox.note("@livereview review")
    sandbox.once()
    assert run_state(sandbox.db) == "notifying"
    assert events(out) == []
    assert gitlab_parts(sandbox) == EXPECTED  # the review and the notice are out already
    fail.unlink()
    reviews_due(sandbox.db)
    assert sandbox.once() == 0
    assert run_state(sandbox.db) == "done"
    assert len(events(out)) == 1
    assert gitlab_parts(sandbox) == EXPECTED


def test_reviewer_text_reaches_the_notifier_without_control_characters(
        sandbox: Sandbox, tmp_path: Path) -> None:
    out, _ = configure(sandbox, tmp_path)
    sandbox.llm.llm.review_findings = {"src/cache.py": [HOSTILE]}
    sandbox.note("@livereview review")
    assert sandbox.once() == 0
    [event] = events(out)
    findings = event["findings"]
    assert isinstance(findings, list)
    body = str(findings[0]["body"])
    assert body.startswith("Terminal red bell") and "evil" in body
    raw = out.read_text(encoding="utf-8")
    assert not Counter(c for c in raw if ord(c) < 32 and c != "\n")
    assert "\x1b" not in body and "\u202e" not in body and "\x07" not in body
