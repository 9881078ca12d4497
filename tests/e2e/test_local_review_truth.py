"""Local reviews tell the truth (docs/DESIGN.md §14): their AI runs live in the
repository's own store, the AI reviews only the review a command names (once, and never a
closed one), an empty range is neither approved nor rejected, and a working-tree review sees
the files git does not track yet."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.sandbox.llm_server import FakeLLMServer, LLMFault
from tests.databases import execute, query, url_for
from tests.e2e.conftest import PROJECT, Sandbox
from tests.e2e.test_local_review_mcp import _config as mcp_config
from tests.e2e.test_local_review_mcp import call
from tests.local_repo import Repo, review_repo


def store_of(repo: Repo) -> str:
    """The repository's own store, as a URL: SQLite on every back end (`url_for` keeps a
    URL as it is)."""
    return f"sqlite:///{repo.path / '.livereview' / 'livereview.db'}"


def runs(db: Path | str, host: str = "local") -> list[tuple[object, ...]]:
    return query(db, "SELECT iid, state, last_error FROM review_runs WHERE host = :host "
                     "ORDER BY id", host=host)


def test_a_local_review_s_ai_run_lives_in_the_repository_s_store_not_the_config_s(
        tmp_path: Path, sandbox: Sandbox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LIVEREVIEW_CONFIG", raising=False)
    repo = review_repo(tmp_path / "r")
    assert main(["--config", str(sandbox.config), "review", "request", "HEAD~1", "--repo",
                 str(repo.path), "--title", "T", "--json"]) == 0
    review = json.loads(capsys.readouterr().out)
    assert review["status"] != "pending"  # the AI reviewed it
    assert [(iid, state) for iid, state, _ in runs(store_of(repo))] == [(1, "done")]
    # The daemon on that config polls its own hosts, and finds nothing of the local review
    # to run (or to fail: its configuration has no host "local").
    assert sandbox.once() == 0
    assert runs(sandbox.database_url) == []
    failed = query(sandbox.database_url,
                   "SELECT key, last_error FROM reply_jobs WHERE state = 'failed' UNION ALL "
                   "SELECT key, last_error FROM review_runs WHERE state = 'failed'")
    assert failed == []


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    for name in ("OPENAI_API_KEY", "LIVEREVIEW_CONFIG", "LIVEREVIEW_AI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with FakeLLMServer() as server:
        yield server


def ai_on(monkeypatch: pytest.MonkeyPatch, llm: FakeLLMServer) -> None:
    monkeypatch.setenv("LIVEREVIEW_AI_BASE_URL", llm.url)
    monkeypatch.setenv("LIVEREVIEW_AI_MODEL", "sandbox")


def review(capsys: pytest.CaptureFixture[str], repo: Repo, *args: str
           ) -> dict[str, object]:
    code = main(["review", *args, "--repo", str(repo.path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    answer: dict[str, object] = json.loads(out)
    return answer


def review_prompts(llm: FakeLLMServer) -> int:
    return sum("reviewing a merge request" in p[0]["content"] for p in llm.llm.prompts)


def bot_threads(state: dict[str, object]) -> list[object]:
    return [t["id"] for t in state["threads"]  # type: ignore[attr-defined]
            if t["messages"][0]["author_kind"] == "bot"]


def test_a_request_runs_the_ai_for_its_own_review_once_and_later_commands_start_none(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = review_repo(tmp_path / "r")
    review(capsys, repo, "request", "HEAD~1", "--title", "first")
    review(capsys, repo, "request", "HEAD~1", "--title", "second")
    review(capsys, repo, "approve", "1")
    ai_on(monkeypatch, llm)
    third = review(capsys, repo, "request", "HEAD~1", "--title", "third")
    assert review_prompts(llm) == 1
    assert bot_threads(third)  # its summary
    assert [(iid, state) for iid, state, _ in runs(store_of(repo))] == [(3, "done")]
    for number in (1, 2):
        shown = review(capsys, repo, "show", str(number))
        assert bot_threads(shown) == []
    assert review(capsys, repo, "show", "1")["status"] == "approved"
    # Later commands, on any of the three, start no review: not of the approved one, not of
    # the one requested without AI, not of the third again.
    for number in (2, 1):
        question = next(t["id"] for t in review(capsys, repo, "show", str(number))["threads"]  # type: ignore[attr-defined]
                        if t["kind"] == "question")
        answered = review(capsys, repo, "reply", str(number), str(question),
                          "@livereview is it?")["thread"]
        assert answered["messages"][-1]["author_kind"] == "bot"  # type: ignore[index]
    assert main(["review", "wait", "3", "--timeout", "0", "--repo", str(repo.path)]) in (0, 124)
    capsys.readouterr()
    review(capsys, repo, "show", "3")
    assert review_prompts(llm) == 1
    assert [(iid, state) for iid, state, _ in runs(store_of(repo))] == [(3, "done")]


NOTHING = "livereview: review 1: the range has no textual change: there is nothing to review"


def _empty_review_is_not_judged(capsys: pytest.CaptureFixture[str], repo: Repo,
                                llm: FakeLLMServer, spec: str) -> None:
    code = main(["review", "request", spec, "--repo", str(repo.path), "--title", "T",
                 "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    state = json.loads(out)
    assert state["files"] == []
    assert state["status"] == "pending"  # neither approved nor changes requested
    assert err.splitlines() == [NOTHING]
    said = [t["messages"][0]["body"] for t in state["threads"]
            if t["messages"][0]["author_kind"] == "bot"]
    assert len(said) == 1 and said[0].startswith("Nothing to review: no textual change")
    assert review_prompts(llm) == 0
    assert runs(store_of(repo)) == []


def test_an_empty_commit_range_is_not_approved_and_the_request_warns(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    ai_on(monkeypatch, llm)
    _empty_review_is_not_judged(capsys, review_repo(tmp_path / "r"), llm, "HEAD..HEAD")


def test_a_working_tree_whose_edit_was_reverted_is_not_approved_and_the_request_warns(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    ai_on(monkeypatch, llm)
    repo = review_repo(tmp_path / "r")
    original = (repo.path / "geo.py").read_text(encoding="utf-8")
    repo.write("geo.py", original + "# an edit\n")
    repo.write("geo.py", original)  # reverted
    _empty_review_is_not_judged(capsys, repo, llm, "HEAD")


def test_a_working_tree_review_holds_the_untracked_files_git_does_not_ignore(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = review_repo(tmp_path / "r")
    repo.commit("ignore build output", **{"_DOT_gitignore": "build/\n*.log\n"})
    repo.write("tools/new_tool.py", "def run():\n    return 42  # TODO: read the config\n")
    repo.write("tools/icon.bin", b"\x00\x01\x02binary\x00")
    repo.write("tools/huge.txt", "HUGE line of text, again and again\n" * 40_000)  # > 1 MB
    repo.write("build/out.py", "GENERATED = 'ignored'\n")
    repo.write("debug.log", "ignored too\n")
    # Symlinks are files to git: each is its target's name, never followed (a secret
    # outside the repository is not read; a link to a directory is one new file).
    (tmp_path / "secret.txt").write_text("TOP SECRET\n", encoding="utf-8")
    (repo.path / "tools" / "secret_link").symlink_to(tmp_path / "secret.txt")
    (repo.path / "tools" / "dir_link").symlink_to(repo.path / "web")
    ai_on(monkeypatch, llm)
    state = review(capsys, repo, "request", "HEAD", "--title", "agent's work")
    files = {f["path"]: f for f in state["files"]}  # type: ignore[attr-defined]
    assert sorted(files) == ["tools/dir_link", "tools/huge.txt", "tools/icon.bin",
                             "tools/new_tool.py", "tools/secret_link"]
    assert [f["additions"] for f in (files["tools/dir_link"], files["tools/secret_link"])] \
        == [1, 1]
    assert (files["tools/new_tool.py"]["status"], files["tools/new_tool.py"]["additions"],
            files["tools/new_tool.py"]["deletions"]) == ("added", 2, 0)
    assert files["tools/icon.bin"]["binary"] is True
    todo = [(t["path"], t["line"], t["code"]) for t in state["threads"]  # type: ignore[attr-defined]
            if t["kind"] == "todo"]
    assert todo == [("tools/new_tool.py", 2, "    return 42  # TODO: read the config")]
    # The AI review read the new file as an added file, its content as the diff; not the
    # ignored ones, and not the binary one.
    [prompt] = [p[-1]["content"] for p in llm.llm.prompts
                if "reviewing a merge request" in p[0]["content"]]
    assert "### file: tools/new_tool.py (added" in prompt
    assert "+    return 42  # TODO: read the config" in prompt
    assert "GENERATED" not in prompt and "ignored too" not in prompt
    assert "binary\x00" not in prompt and "HUGE" not in prompt
    assert f"+{tmp_path / 'secret.txt'}" in prompt and "TOP SECRET" not in prompt
    [summary] = [t["messages"][0]["body"] for t in state["threads"]  # type: ignore[attr-defined]
                 if t["messages"][0]["author_kind"] == "bot" and not t["path"]]
    assert "`tools/icon.bin` — binary" in summary
    assert re.search(r"`tools/huge.txt` — too large \(\d+ bytes\)", summary)


def test_a_daemon_watching_the_repository_does_not_approve_an_empty_review_either(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer) -> None:
    repo = review_repo(tmp_path / "r")
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[daemon]\ndatabase_url = "{url_for(tmp_path / "state" / "livereview.db")}"\n'
        f'metrics_listen = ""\n\n'
        f'[ai]\nbase_url = "{llm.url}"\nmodel = "sandbox"\napi_key_env = ""\n\n'
        '[[hosts]]\nname = "laptop"\ntype = "local"\n\n'
        f'[[repos]]\nhost = "laptop"\npath = "{repo.path}"\nreview_on = ["opened"]\n',
        encoding="utf-8")
    code = main(["review", "request", "HEAD..HEAD", "--repo", str(repo.path), "--title", "T"])
    assert code == 0
    capsys.readouterr()
    assert main(["--config", str(config), "once"]) == 0
    [state] = json.loads(
        (repo.path / ".livereview" / "review.json").read_text(encoding="utf-8"))["reviews"]
    assert state["status"] == "pending"
    assert review_prompts(llm) == 0


def test_a_file_moved_in_the_working_tree_is_a_rename_as_git_sees_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer) -> None:
    repo = review_repo(tmp_path / "r")
    (repo.path / "geo.py").rename(repo.path / "geometry.py")  # `mv`, not `git mv`
    state = review(capsys, repo, "request", "HEAD", "--title", "moved")
    assert [(f["path"], f["old_path"], f["status"]) for f in state["files"]] == [  # type: ignore[attr-defined]
        ("geometry.py", "geo.py", "renamed")]
    assert repo.git("status", "--porcelain") == " D geo.py\n?? geometry.py\n"  # index kept


def test_a_hosted_mr_with_no_change_is_not_approved_either(sandbox: Sandbox) -> None:
    """The same rule on GitLab: an MR whose diff has no file (its head's tree is its base's)
    gets the summary but neither approval nor a request for changes."""
    iid = sandbox.gitlab.add_mr(PROJECT, title="Nothing yet", author="bob",
                                source_branch="empty", files={})
    sandbox.gitlab.add_note(PROJECT, iid, author="alice", body="@livereview review")
    assert sandbox.once() == 0
    assert sandbox.gitlab.approvers(PROJECT, iid) == []
    [(state, verdict)] = query(sandbox.database_url, "SELECT state, verdict FROM review_runs "
                                                     "WHERE iid = :iid", iid=iid)
    assert (state, verdict) == ("done", "commented")


def test_a_retry_due_on_another_review_waits_for_a_command_about_that_review(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    ai_on(monkeypatch, llm)
    repo = review_repo(tmp_path / "r")
    llm.llm.faults = [LLMFault(status=500) for _ in range(20)]  # the model is down
    review(capsys, repo, "request", "HEAD~1", "--title", "first")
    [(iid, state, error)] = runs(store_of(repo))
    assert (iid, state) == (1, "reviewing") and error  # to be retried later
    llm.llm.faults.clear()  # the model is back, and the retry is due
    execute(store_of(repo), "UPDATE review_runs SET next_attempt_at = created_at")
    asked = review_prompts(llm)
    review(capsys, repo, "request", "HEAD~1", "--title", "second")
    assert review_prompts(llm) == asked + 1  # the second review's, not the first's again
    assert [(i, s) for i, s, _ in runs(store_of(repo))] == [(1, "reviewing"), (2, "done")]
    assert bot_threads(review(capsys, repo, "show", "1")) == []
    # A command about the first review takes its retry up.
    question = next(t["id"] for t in review(capsys, repo, "show", "1")["threads"]  # type: ignore[attr-defined]
                    if t["kind"] == "question")
    review(capsys, repo, "reply", "1", str(question), "@livereview is it?")
    assert [(i, s) for i, s, _ in runs(store_of(repo))] == [(1, "done"), (2, "done")]


def test_an_agent_asking_for_a_review_of_an_empty_range_is_told_there_is_nothing_to_review(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LIVEREVIEW_CONFIG", raising=False)
    repo = review_repo(tmp_path / "r")
    config = mcp_config(tmp_path, repo.path)
    failed, empty = call(config, "request_review", title="Nothing", range="HEAD",
                         repo=str(repo.path))
    assert not failed, empty
    assert empty["files"] == []
    assert empty["warning"] == "the range has no textual change: there is nothing to review"
    failed, full = call(config, "request_review", title="Area", range="HEAD~1",
                        repo=str(repo.path))
    assert not failed and "warning" not in full
