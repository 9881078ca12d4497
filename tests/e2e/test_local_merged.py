"""A local review becomes `merged` when git says its branch reached main: on a real
repository, merged with `git merge --no-ff`, seen by `show`, `wait`, `update` and review.json;
work reviewed on main itself never is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.test_local_review import exported, request, run
from tests.local_repo import Repo, review_repo


@pytest.fixture(autouse=True)
def _no_ai(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL", "LIVEREVIEW_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def branched(path: Path) -> Repo:
    """main with two commits, and `feature` one commit ahead of it (checked out)."""
    repo = review_repo(path)
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("feature work", geo_DOT_py="def area(r):\n    return 3.14159 * r * r\n")
    return repo


def merge(repo: Repo) -> None:
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature", "feature")


def show(capsys: pytest.CaptureFixture[str], repo: Repo, review_id: object) -> dict[str, object]:
    code, out, err = run(capsys, "show", str(review_id), "--repo", str(repo.path), "--json")
    assert code == 0, err
    review: dict[str, object] = json.loads(out)
    return review


@pytest.mark.parametrize("spec", ["feature", "main..feature", "HEAD~1"])
def test_a_branch_review_is_merged_once_main_holds_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str) -> None:
    repo = branched(tmp_path / "r")
    review = request(capsys, repo, spec)  # HEAD~1: its head is the tip of `feature`
    assert (review["branch"], review["range"]) == ("feature", spec)  # the range as written
    assert show(capsys, repo, review["id"])["status"] == "pending"
    merge(repo)
    assert show(capsys, repo, review["id"])["status"] == "merged"
    assert exported(repo)["reviews"][0]["status"] == "merged"  # type: ignore[index]
    code, out, _ = run(capsys, "show", str(review["id"]), "--repo", str(repo.path))
    assert code == 0
    assert "[merged]" in out


def test_work_reviewed_on_main_stays_pending(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    repo.git("branch", "feature")  # a branch at main's tip is not what is under review
    review = request(capsys, repo, "HEAD~1..HEAD")
    assert review["branch"] is None
    repo.commit("more on main", keep_DOT_py="x = 3\n")
    assert show(capsys, repo, review["id"])["status"] == "pending"


def test_wait_reports_the_merge_and_update_keeps_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = branched(tmp_path / "r")
    review = request(capsys, repo, "feature")
    code, out, _ = run(capsys, "wait", str(review["id"]), "--repo", str(repo.path),
                       "--timeout", "0")
    assert code == 124
    assert json.loads(out)["status"] == "pending"
    merge(repo)
    code, out, _ = run(capsys, "wait", str(review["id"]), "--repo", str(repo.path),
                       "--timeout", "5")
    assert code == 0
    feedback = json.loads(out)
    assert (feedback["status"], feedback["status_changed"]) == ("merged", True)
    code, out, err = run(capsys, "update", str(review["id"]), "--repo", str(repo.path),
                         "--range", "HEAD~1..HEAD", "--json")
    assert code == 0, err
    updated = json.loads(out)
    assert (updated["status"], updated["branch"]) == ("merged", "feature")
