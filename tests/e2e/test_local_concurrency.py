"""Several `livereview review …` processes on one review at the same moment: each one's
change lands exactly once (no thread, reply or verdict comment twice, none lost), and
`.livereview/review.json` is the export of the store as it ends. The processes start
together on a barrier (no sleeps); what they race on is the store's write lock."""

from __future__ import annotations

import contextlib
import io
import json
import multiprocessing
from collections import Counter
from collections.abc import Iterator
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.sandbox.llm_server import FakeLLMServer
from tests.local_repo import Repo, review_repo

PROCESSES = 4


@pytest.fixture(autouse=True)
def _no_ai(monkeypatch: pytest.MonkeyPatch) -> None:  # the `llm` fixture turns it on
    for name in ("OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL", "LIVEREVIEW_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def _command(barrier: Barrier, args: list[str]) -> None:
    """One process: wait for the others, then run the command as a person would."""
    barrier.wait()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["review", *args])
    raise SystemExit(code)


def together(commands: list[list[str]]) -> None:
    spawn = multiprocessing.get_context("spawn")  # nothing of this process is shared
    barrier = spawn.Barrier(len(commands))
    processes = [spawn.Process(target=_command, args=(barrier, args)) for args in commands]
    for p in processes:
        p.start()
    for p in processes:
        p.join()
    assert [p.exitcode for p in processes] == [0] * len(commands)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    capsys.readouterr()
    code = main(["review", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    found: dict[str, object] = json.loads(out)
    return found


def request(capsys: pytest.CaptureFixture[str], repo: Repo) -> dict[str, object]:
    return cli(capsys, "request", "HEAD~1", "--repo", str(repo.path), "--title", "Geo")


def shown_and_exported(capsys: pytest.CaptureFixture[str], repo: Repo) -> dict[str, object]:
    """The review as the store has it, checked to be what review.json says."""
    shown = cli(capsys, "show", "1", "--repo", str(repo.path))
    exported = json.loads((repo.path / ".livereview" / "review.json").read_text("utf-8"))
    assert exported["reviews"] == [shown]
    return shown


def threads(review: dict[str, object]) -> list[dict[str, object]]:
    found: list[dict[str, object]] = review["threads"]  # type: ignore[assignment]
    return found


def test_updates_at_the_same_moment_open_each_new_thread_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    before = len(threads(request(capsys, repo)))
    repo.commit("more", extra_DOT_py="def f():\n    return 1  # TODO: cache it\n")
    together([["update", "1", "--range", "HEAD~2..HEAD", "--repo", str(repo.path)]]
             * PROCESSES)
    review = shown_and_exported(capsys, repo)
    keys = Counter((t["kind"], t["path"], t["code"]) for t in threads(review))
    assert [k for k, n in keys.items() if n > 1] == []
    assert len(threads(review)) == before + 1
    assert ("todo", "extra.py", "    return 1  # TODO: cache it") in keys


def test_replies_at_the_same_moment_each_land_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    request(capsys, repo)
    together([["reply", "1", "1", f"answer {i}", "--repo", str(repo.path)]
              for i in range(PROCESSES)])
    review = shown_and_exported(capsys, repo)
    bodies = [m["body"] for m in threads(review)[0]["messages"]]  # type: ignore[attr-defined]
    assert sorted(bodies[1:]) == [f"answer {i}" for i in range(PROCESSES)]


def test_resolves_at_the_same_moment_leave_one_resolved_thread_and_nothing_else(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    before = request(capsys, repo)
    together([["resolve", "1", str(t), "--repo", str(repo.path)]
              for t in (1, 2) for _ in range(PROCESSES // 2)])
    review = shown_and_exported(capsys, repo)
    assert [t["resolved"] for t in threads(review)] == [
        t["id"] in (1, 2) for t in threads(before)]
    assert [t["messages"] for t in threads(review)] == [t["messages"] for t in threads(before)]


def test_verdicts_at_the_same_moment_each_leave_their_comment_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    before = len(threads(request(capsys, repo)))
    together([["request-changes", "1", "--comment", f"please {i}", "--repo", str(repo.path)]
              for i in range(PROCESSES)])
    review = shown_and_exported(capsys, repo)
    comments = [t["messages"][0]["body"] for t in threads(review)[before:]]  # type: ignore[index]
    assert sorted(comments) == [f"please {i}" for i in range(PROCESSES)]
    assert review["status"] == "changes_requested"


AI_FINDINGS = {"extra.py": [{"severity": "critical", "path": "extra.py", "line": 2,
                             "side": "new", "body": "Cache it now"}]}


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        monkeypatch.setenv("LIVEREVIEW_AI_BASE_URL", server.url)
        monkeypatch.setenv("LIVEREVIEW_AI_MODEL", "sandbox")
        yield server


def test_ai_runs_of_updates_at_the_same_moment_post_each_finding_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer) -> None:
    repo = review_repo(tmp_path / "r")
    request(capsys, repo)
    repo.commit("more", extra_DOT_py="def f():\n    return 1\n")
    llm.llm.review_findings = AI_FINDINGS
    together([["update", "1", "--range", "HEAD~2..HEAD", "--repo", str(repo.path)]]
             * PROCESSES)
    review = shown_and_exported(capsys, repo)
    found = [(t["path"], t["line"]) for t in threads(review) if t["kind"] == "finding"]
    assert found == [("extra.py", 2)]


def test_ai_answers_replies_at_the_same_moment_once_each(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer) -> None:
    repo = review_repo(tmp_path / "r")
    assert len(threads(request(capsys, repo))) >= PROCESSES  # a thread for each process
    together([["reply", "1", str(t), f"@livereview why {t}?", "--repo", str(repo.path)]
              for t in range(1, PROCESSES + 1)])
    review = shown_and_exported(capsys, repo)
    for thread in threads(review)[:PROCESSES]:
        kinds = [m["author_kind"] for m in thread["messages"]]  # type: ignore[attr-defined]
        assert kinds[1:] == ["human", "bot"], thread
