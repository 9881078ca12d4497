"""Local reviews answered by the same reply workflow as a hosted MR (sandbox model)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.sandbox.llm_server import LABEL, FakeLLMServer
from livereview.tools import local_review as ops
from tests.databases import url_for
from tests.local_repo import review_repo


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("LIVEREVIEW_CONFIG", raising=False)
    with FakeLLMServer() as server:
        yield server


def _thread(review: dict[str, object], text: str) -> dict[str, object]:
    return next(t for t in review["threads"]  # type: ignore[attr-defined]
                if t["messages"][0]["body"] == text)


def test_a_person_s_reply_is_answered_in_its_thread(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_AI_BASE_URL", llm.url)
    monkeypatch.setenv("LIVEREVIEW_AI_MODEL", "sandbox")
    repo = review_repo(tmp_path / "r")
    assert main(["review", "request", "HEAD~1", "--repo", str(repo.path), "--title", "T",
                 "--json"]) == 0
    thread = _thread(json.loads(capsys.readouterr().out), "math.pi")
    assert main(["review", "reply", "1", str(thread["id"]), "@livereview why not math.pi?",
                 "--repo", str(repo.path), "--json"]) == 0
    out, err = capsys.readouterr()
    answered = json.loads(out)["thread"]
    assert "no AI settings" not in out + err
    bodies = [(m["author_kind"], m["body"]) for m in answered["messages"]]
    assert bodies[1] == ("human", "@livereview why not math.pi?")
    assert bodies[2][0] == "bot" and LABEL in bodies[2][1]
    assert "geo.py:3" in bodies[2][1]  # the model was given the anchored line
    assert answered["messages"][1]["reactions"] == ["eyes"]  # acknowledged first
    asked = len(llm.llm.prompts)  # the review's, and the answer's
    # Exactly once: another run of the workflow answers nothing more.
    assert main(["review", "show", "1", "--repo", str(repo.path)]) == 0
    assert main(["review", "wait", "1", "--timeout", "0", "--repo", str(repo.path)]) == 0
    assert len(llm.llm.prompts) == asked


def test_a_watched_local_host_is_answered_by_the_daemon(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer) -> None:
    repo = review_repo(tmp_path / "r")
    db = tmp_path / "state" / "livereview.db"
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[daemon]\ndatabase_url = "{url_for(db)}"\nmetrics_listen = ""\n\n'
        f'[ai]\nbase_url = "{llm.url}"\nmodel = "sandbox"\napi_key_env = ""\n\n'
        '[[hosts]]\nname = "laptop"\ntype = "local"\n\n'
        f'[[repos]]\nhost = "laptop"\npath = "{repo.path}"\n', encoding="utf-8")
    assert main(["--config", str(config), "review", "request", "HEAD~1", "--repo",
                 str(repo.path), "--title", "T", "--json"]) == 0
    thread = _thread(json.loads(capsys.readouterr().out), "should this trim the name?")
    # The review is the repository's (its own store); the config's holds the daemon's jobs.
    assert (repo.path / ".livereview" / "livereview.db").exists()

    async def write_reply() -> None:  # a person's reply that nothing answered yet
        ws = ops.open_workspace(repo.path)
        try:
            await ops.reply(ws, 1, int(str(thread["id"])), "@livereview yes or no?")
        finally:
            ws.close()

    asyncio.run(write_reply())
    assert main(["--config", str(config), "once"]) == 0
    state = json.loads((repo.path / ".livereview" / "review.json").read_text())
    messages = _thread(state["reviews"][0], "should this trim the name?")["messages"]
    assert isinstance(messages, list)
    assert [m["author_kind"] for m in messages] == ["code", "human", "bot"]
    assert LABEL in messages[2]["body"]


FINDINGS = {"geo.py": [
    {"severity": "critical", "path": "geo.py", "line": 3, "side": "new",
     "body": "3.14 loses precision\n\nUse math.pi."},
    {"severity": "suggestion", "path": "geo.py", "line": 1, "side": "new",
     "body": "Name the parameter radius"},
]}


def test_the_ai_review_adds_findings_as_threads_and_a_verdict(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_AI_BASE_URL", llm.url)
    monkeypatch.setenv("LIVEREVIEW_AI_MODEL", "sandbox")
    llm.llm.review_findings = FINDINGS
    repo = review_repo(tmp_path / "r")
    assert main(["review", "request", "HEAD~1", "--repo", str(repo.path), "--title", "T",
                 "--json"]) == 0
    review = json.loads(capsys.readouterr().out)
    findings = [t for t in review["threads"] if t["kind"] == "finding"]
    assert sorted((t["path"], t["line"], t["code"]) for t in findings) == [
        ("geo.py", 1, "def area(r):"),
        ("geo.py", 3, "    return 3.14 * r * r  # TODO: math.pi")]
    assert all(t["messages"][0]["author_kind"] == "bot" for t in findings)
    general = [t["messages"][0]["body"] for t in review["threads"] if not t["path"]]
    assert any("changes requested" in body for body in general)
    assert review["status"] == "changes_requested"
    # A commit moves the finding's line down: `update` re-anchors it, and reviews again.
    repo.commit("import", **{"geo_DOT_py": "import math\n" + (repo.path / "geo.py").read_text()})
    llm.llm.review_findings = {}
    assert main(["review", "update", "1", "--range", "HEAD~2", "--repo", str(repo.path),
                 "--json"]) == 0
    updated = json.loads(capsys.readouterr().out)
    moved = next(t for t in updated["threads"] if t["id"] == next(
        f["id"] for f in findings if f["line"] == 3))
    assert moved["line"] == 4


def test_check_reads_a_local_host_without_creating_anything(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer) -> None:
    repo = review_repo(tmp_path / "r")
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[daemon]\ndatabase_url = "{url_for(tmp_path / "state.db")}"\n\n'
        f'[ai]\nbase_url = "{llm.url}"\nmodel = "sandbox"\napi_key_env = ""\n\n'
        '[[hosts]]\nname = "laptop"\ntype = "local"\n\n'
        f'[[repos]]\nhost = "laptop"\npath = "{repo.path}"\n\n'
        f'[[repos]]\nhost = "laptop"\npath = "{tmp_path / "elsewhere"}"\n', encoding="utf-8")
    assert main(["--config", str(config), "check"]) == 1
    out = capsys.readouterr().out
    assert re.search(r"elsewhere +FAIL +not a git working tree", out)
    assert "each repository's .livereview store, no requests" in out
    assert not (repo.path / ".livereview").exists()
