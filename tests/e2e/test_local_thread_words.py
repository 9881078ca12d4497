"""Threads and ranges named one way wherever they are named (docs/local-reviews.md): a
thread by its number within its review (`review reply 2 1` is thread 1 of review 2), in the
CLI, its JSON, the MCP tools; a range as `RANGE` after the verb for `request` and `update`
alike. The spellings of the release before (a repository-wide thread id, `update --range`)
work for one release, each with one line on stderr (the MCP tools: a `warning`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from livereview.app.local_respond import responder
from livereview.cli.commands import main
from livereview.tools import local_review as ops
from livereview.web.app import create_app
from livereview.web.guard import Access
from livereview.web.site import Site
from tests.e2e.test_cli_vocabulary import review
from tests.e2e.test_local_review_mcp import _config, call
from tests.local_repo import Repo, review_repo

DEPRECATED_ID = "a repository-wide thread id is deprecated"
WEB = "http://127.0.0.1:8470"


@pytest.fixture(autouse=True)
def _no_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LIVEREVIEW_CONFIG", "OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def shown(capsys: pytest.CaptureFixture[str], repo: Repo, review_id: int) -> dict[str, Any]:
    code, out, _ = review(capsys, repo, "show", str(review_id), "--json")
    assert code == 0
    found: dict[str, Any] = json.loads(out)
    return found


def bodies(capsys: pytest.CaptureFixture[str], repo: Repo, review_id: int
           ) -> dict[int, list[str]]:
    return {t["id"]: [m["body"] for m in t["messages"]]
            for t in shown(capsys, repo, review_id)["threads"]}


def _two_reviews(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Repo:
    """Reviews 1 and 2 of the same commit, six marked comments each: the store's thread
    rows 1-6 are review 1's, 7-12 review 2's."""
    repo = review_repo(tmp_path / "r")
    for title in ("first", "second"):
        assert review(capsys, repo, "request", "HEAD~1", "--title", title)[0] == 0
    return repo


def test_each_review_numbers_its_threads_from_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _two_reviews(tmp_path, capsys)
    assert list(bodies(capsys, repo, 1)) == list(bodies(capsys, repo, 2)) == [1, 2, 3, 4, 5, 6]
    code, out, err = review(capsys, repo, "reply", "2", "1", "--body", "thread one of two")
    assert code == 0 and DEPRECATED_ID not in err
    assert out.startswith("#1 ")
    assert bodies(capsys, repo, 2)[1][-1] == "thread one of two"
    assert "thread one of two" not in json.dumps(bodies(capsys, repo, 1))
    code, out, _ = review(capsys, repo, "reply", "2", "3", "--body", "x", "--json")
    assert code == 0
    said = json.loads(out)
    assert (said["thread"]["id"], said["message"]["thread"]) == (3, 3)
    assert review(capsys, repo, "resolve", "2", "6")[0] == 0
    resolved = [t["id"] for t in shown(capsys, repo, 2)["threads"] if t["resolved"]]
    assert resolved == [6]
    assert not any(t["resolved"] for t in shown(capsys, repo, 1)["threads"])
    code, out, _ = review(capsys, repo, "show", "2")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines() if line.startswith("#")] == [
        f"#{n}" for n in range(1, 7)]
    code, out, err = review(capsys, repo, "reply", "2", "13", "--body", "nowhere")
    assert (code, out) == (2, "")
    assert err == "livereview: review reply: review 2 has no thread 13\n"


def test_a_repository_wide_id_of_the_release_before_still_names_its_thread(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _two_reviews(tmp_path, capsys)
    # Row 9 is review 2's third thread; review 2 has no thread 9.
    code, _, err = review(capsys, repo, "reply", "2", "9", "--body", "old id")
    assert code == 0
    assert err.splitlines()[0] == (
        "livereview: thread 9: a repository-wide thread id is deprecated: it is thread #3 "
        "of review 2 (the old ids go in the next release)")
    assert bodies(capsys, repo, 2)[3][-1] == "old id"
    code, _, err = review(capsys, repo, "resolve", "2", "12")
    assert code == 0 and DEPRECATED_ID in err
    assert [t["id"] for t in shown(capsys, repo, 2)["threads"] if t["resolved"]] == [6]


def test_a_number_the_review_has_wins_over_an_old_id_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _two_reviews(tmp_path, capsys)
    assert review(capsys, repo, "request-changes", "2", "--body", "seventh")[0] == 0
    # 7 is review 2's seventh thread (row 13) and the old id of its first (row 7).
    code, _, err = review(capsys, repo, "reply", "2", "7", "--body", "to the seventh")
    assert code == 0
    assert err.splitlines()[0] == (
        "livereview: thread 7 is thread #7 of review 2: threads are numbered per review now "
        "(the repository-wide id 7 is its #1)")
    assert bodies(capsys, repo, 2)[7] == ["seventh", "to the seventh"]
    code, _, err = review(capsys, repo, "reply", "2", "2", "--body", "plain")
    assert code == 0 and "threads are numbered" not in err  # row 2 is review 1's


def test_update_takes_the_range_as_request_does_and_still_the_old_option(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    assert review(capsys, repo, "request", "HEAD~1", "--title", "T")[0] == 0
    repo.commit("more", extra_DOT_py="# TODO: one more\n")
    code, out, err = review(capsys, repo, "update", "1", "HEAD~2..HEAD")
    assert code == 0 and "deprecated" not in err
    assert shown(capsys, repo, 1)["range"] == "HEAD~2..HEAD"
    code, _, err = review(capsys, repo, "update", "1", "--range", "HEAD~1")
    assert code == 0
    assert [line for line in err.splitlines() if "deprecated" in line] == [
        "livereview: review update --range is deprecated: give RANGE after the id, as "
        "`review request` takes it (the old spelling goes in the next release)"]
    assert shown(capsys, repo, 1)["range"] == "HEAD~1"
    for args, said in ((("update", "1"), "review update: RANGE is required"),
                       (("update", "1", "HEAD", "--range", "HEAD~1"),
                        "review update: give the range once, as RANGE")):
        code, out, err = review(capsys, repo, *args)
        assert (code, out) == (2, "") and err.startswith(f"livereview: {said}"), err
    assert shown(capsys, repo, 1)["range"] == "HEAD~1"


def test_request_and_update_describe_the_range_in_the_same_words(
        capsys: pytest.CaptureFixture[str]) -> None:
    helps = []
    for verb in ("request", "update"):
        with pytest.raises(SystemExit):
            main(["review", verb, "--help"])
        helps.append(" ".join(capsys.readouterr().out.split()))
    for text in helps:
        assert "RANGE HEAD (uncommitted work), HEAD~N (the last N commits), A..B, a commit " \
               "sha, or a branch (since it left main)" in text, text


def test_the_mcp_tools_name_threads_by_their_number_in_the_review(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _two_reviews(tmp_path, capsys)
    config = _config(tmp_path, repo.path)
    failed, updated = call(config, "update_review", review_id=2, add_comment="agent here",
                           thread=2, repo=str(repo.path))
    assert not failed, updated
    assert "warning" not in updated
    second = {t["id"]: t for t in updated["review"]["threads"]}
    assert second[2]["messages"][-1]["body"] == "agent here"
    assert second[2]["messages"][-1]["thread"] == 2
    failed, updated = call(config, "update_review", review_id=2, add_comment="old id",
                           thread=10, repo=str(repo.path))
    assert not failed, updated
    assert DEPRECATED_ID in updated["warning"]
    assert {t["id"]: t for t in updated["review"]["threads"]}[4]["messages"][-1]["body"] \
        == "old id"
    assert review(capsys, repo, "reply", "2", "2", "--body", "person")[0] == 0
    failed, waited = call(config, "update_review", review_id=2, wait_for_feedback=10,
                          repo=str(repo.path))
    assert not failed, waited
    assert [(m["thread"], m["body"]) for m in waited["feedback"]] == [(2, "person")]


def test_the_web_page_names_threads_by_their_number_in_the_review(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _two_reviews(tmp_path, capsys)
    assert review(capsys, repo, "request-changes", "2", "--body", "on the whole")[0] == 0
    site = Site([ops.open_workspace(repo.path)], responder(None))
    with TestClient(create_app(site, Access()), base_url=WEB) as web:
        page = web.get("/r/0/2").text
        assert 'id="thread-7"' in page and ">#7<" in page  # the store's row is 13
        assert 'name="thread" value="7"' in page and "thread-13" not in page
        token = re.search(r'name="csrf" content="([0-9a-f]+)"', page)
        assert token is not None
        posted = web.post("/r/0/2/reply", headers={"Origin": WEB, "Accept": "application/json"},
                          data={"csrf": token[1], "thread": "7", "text": "from the page"})
        assert posted.json() == {"ok": True}
    assert bodies(capsys, repo, 2)[7] == ["on the whole", "from the page"]
