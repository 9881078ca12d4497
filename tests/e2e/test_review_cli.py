"""`livereview review <MR>`: one review now, its result as JSON, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json

import pytest

from livereview.cli.commands import main
from livereview.review.render import marked
from tests.e2e.conftest import PROJECT, Sandbox
from tests.e2e.test_review_gitlab import FINDINGS


def review(sandbox: Sandbox, *args: str) -> int:
    return main(["--config", str(sandbox.config), "review", *args])


def test_review_by_reference_prints_the_result_as_json(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.llm.llm.review_findings = FINDINGS
    assert review(sandbox, f"gl:{PROJECT}!{sandbox.iid}", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert out["state"] == "done" and out["verdict"] == "changes_requested"
    assert [(f["line"], f["side"], f["placement"]) for f in out["findings"]] == [
        (8, "new", "inline"), (7, "old", "inline"), (400, "new", "outside")]
    assert all(f["message_id"] for f in out["findings"][:2])
    summaries = [n for n in sandbox.bot_notes() if (marked(str(n["body"])) or ("", ""))[1]
                 == "summary"]
    assert [str(n["id"]) for n in summaries] == [out["summary_message_id"]]
    # Asked again at the same head: the stored result, nothing posted again.
    posted = len(sandbox.bot_notes())
    assert review(sandbox, f"gl:{PROJECT}!{sandbox.iid}", "--json") == 0
    assert json.loads(capsys.readouterr().out)["run"] == out["run"]
    assert len(sandbox.bot_notes()) == posted


def test_review_by_url_in_text(sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"{sandbox.gitlab_server.url}/{PROJECT}/-/merge_requests/{sandbox.iid}"
    assert review(sandbox, url) == 0
    assert capsys.readouterr().out.startswith("verdict: approved")


@pytest.mark.parametrize("ref", ["nohost:acme/widgets!1", "https://elsewhere/x/-/merge_requests/1",
                                 "gl:acme/widgets!999"])
def test_a_bad_reference_is_one_line_and_exit_2(sandbox: Sandbox, ref: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert review(sandbox, ref) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("livereview: ") and "Traceback" not in err


def test_a_closed_mr_is_not_reviewed_exit_1(sandbox: Sandbox,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.gitlab.find_mr(PROJECT, sandbox.iid).state = "closed"
    assert review(sandbox, f"gl:{PROJECT}!{sandbox.iid}") == 1
    last = capsys.readouterr().err.splitlines()[-1]  # after the JSON log lines
    assert last == "livereview: the review is skipped: the MR is closed"
    assert sandbox.bot_notes() == []
