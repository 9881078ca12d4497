"""A repository cannot make livereview write outside it: a clone whose `.livereview` is a
symlink, holds tracked store files, or links inside it is refused by every process that
opens the store (the CLI, the MCP tools, the local host the AI runner and a daemon poll),
with one line and exit 2, and the file or folder elsewhere stays exactly as it was."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.hosts.base import Forbidden
from livereview.hosts.local.adapter import LocalHost
from livereview.hosts.local.git import tracked
from livereview.store.review_export import RepoBooks
from tests.local_repo import Repo, review_repo

ELSEWHERE_TEXT = b"someone else's file\n"
SIDE_FILES = ("livereview.db", "livereview.db-wal", "livereview.db-shm",
              "livereview.db-journal", "review.json", "write.lock", "runner.lock")


@pytest.fixture(autouse=True)
def _no_ai(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL", "LIVEREVIEW_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def snapshot(path: Path) -> dict[str, tuple[bytes, int]] | None:
    """Every file under `path` with its bytes and mtime (None: nothing there at all)."""
    if not os.path.lexists(path):
        return None
    if path.is_file():
        return {"": (path.read_bytes(), path.stat().st_mtime_ns)}
    return {str(p.relative_to(path)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(path.rglob("*")) if p.is_file()}


def request(capsys: pytest.CaptureFixture[str], repo: Repo) -> tuple[int, str, str]:
    code = main(["review", "request", "HEAD~1", "--repo", str(repo.path), "--title", "t"])
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(capsys: pytest.CaptureFixture[str], repo: Repo, elsewhere: Path,
                   names: str) -> None:
    before = snapshot(elsewhere)
    store_before = snapshot(repo.path / ".livereview")
    code, out, err = request(capsys, repo)
    assert code == 2, err
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err
    assert names in err
    assert snapshot(elsewhere) == before
    assert snapshot(repo.path / ".livereview") == store_before


def folder_linked_to_a_folder(repo: Repo, elsewhere: Path) -> str:
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_bytes(ELSEWHERE_TEXT)
    (repo.path / ".livereview").symlink_to(elsewhere)
    return ".livereview is a symlink"


def folder_linked_to_nothing_yet(repo: Repo, elsewhere: Path) -> str:
    (repo.path / ".livereview").symlink_to(elsewhere)  # mkdir would create it elsewhere
    return ".livereview is a symlink"


def folder_tracked_as_a_link(repo: Repo, elsewhere: Path) -> str:
    elsewhere.mkdir()
    (repo.path / ".livereview").symlink_to(elsewhere)
    repo.commit("ship a link")
    return ".livereview is a symlink"


def folder_is_a_file(repo: Repo, elsewhere: Path) -> str:
    (repo.path / ".livereview").write_bytes(ELSEWHERE_TEXT)
    return "not a directory"


def tracked_database(repo: Repo, elsewhere: Path) -> str:
    repo.commit("ship a store", _DOT_livereview__livereview_DOT_db="not sqlite")
    return "livereview.db is tracked by git"


def tracked_export(repo: Repo, elsewhere: Path) -> str:
    repo.commit("ship an export", _DOT_livereview__review_DOT_json='{"reviews": []}\n')
    return "review.json is tracked by git"


def hard_linked_database(repo: Repo, elsewhere: Path) -> str:
    elsewhere.write_bytes(ELSEWHERE_TEXT)
    (repo.path / ".livereview").mkdir()
    os.link(elsewhere, repo.path / ".livereview" / "livereview.db")
    return "hard links"


LAYOUTS: list[Callable[[Repo, Path], str]] = [
    folder_linked_to_a_folder, folder_linked_to_nothing_yet, folder_tracked_as_a_link,
    folder_is_a_file, tracked_database, tracked_export, hard_linked_database]


@pytest.mark.parametrize("layout", LAYOUTS, ids=lambda f: f.__name__)
def test_a_hostile_store_folder_is_refused_and_nothing_elsewhere_changes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        layout: Callable[[Repo, Path], str]) -> None:
    repo = review_repo(tmp_path / "r")
    elsewhere = tmp_path / "elsewhere"
    said = layout(repo, elsewhere)
    assert_refused(capsys, repo, elsewhere, said)


@pytest.mark.parametrize("name", SIDE_FILES)
@pytest.mark.parametrize("target_exists", [True, False], ids=["to a file", "dangling"])
def test_a_symlink_among_the_store_s_files_is_refused_and_its_target_untouched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str,
        target_exists: bool) -> None:
    repo = review_repo(tmp_path / "r")
    elsewhere = tmp_path / "elsewhere"
    if target_exists:
        elsewhere.write_bytes(ELSEWHERE_TEXT)
    (repo.path / ".livereview").mkdir()
    (repo.path / ".livereview" / name).symlink_to(elsewhere)
    assert_refused(capsys, repo, elsewhere, f".livereview/{name} is a symlink")


def test_a_symlink_put_in_after_a_review_is_refused_by_the_next_command(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    code, _, err = request(capsys, repo)
    assert code == 0, err
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(ELSEWHERE_TEXT)
    export = repo.path / ".livereview" / "review.json"
    export.unlink()
    export.symlink_to(elsewhere)
    assert_refused(capsys, repo, elsewhere, "review.json is a symlink")


def test_the_mcp_tool_refuses_a_linked_store_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.e2e.test_local_review_mcp import _config, call
    repo = review_repo(tmp_path / "r")
    elsewhere = tmp_path / "elsewhere"
    folder_linked_to_nothing_yet(repo, elsewhere)
    failed, said = call(_config(tmp_path, repo.path), "request_review", title="t",
                        range="HEAD~1", repo=str(repo.path))
    assert failed
    assert ".livereview is a symlink" in said
    assert not os.path.lexists(elsewhere)


def test_the_local_host_the_ai_runner_and_a_daemon_poll_refuses_a_tracked_store(
        tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    tracked_database(repo, tmp_path / "elsewhere")
    before = snapshot(repo.path / ".livereview")
    host = LocalHost("laptop", RepoBooks(tracked), root=tmp_path)

    async def poll() -> None:
        try:
            await host.list_changed_mrs(("r",), None)
        finally:
            await host.close()

    with pytest.raises(Forbidden, match=r"livereview\.db is tracked by git"):
        asyncio.run(poll())
    assert snapshot(repo.path / ".livereview") == before
