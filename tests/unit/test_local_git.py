"""The git reader against real repositories: every figure is git's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from livereview.hosts.local.git import BadRange, Git, GitError, NotARepository
from tests.local_repo import Repo, review_repo


def _as_numstat(git: Git, spec: str) -> list[tuple[str, str, str]]:
    rows = git.numstat(git.resolve(spec))
    return [("-" if r.binary else str(r.additions), "-" if r.binary else str(r.deletions),
             f"{r.old_path} => {r.path}" if r.status == "renamed" else r.path) for r in rows]


def test_counts_and_statuses_are_git_diff_numstat_s(tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    git = Git.open(repo.path)
    assert _as_numstat(git, "HEAD~1") == repo.numstat("HEAD~1")
    statuses = {r.path: (r.status, r.binary) for r in git.numstat(git.resolve("HEAD~1"))}
    assert statuses["new_name.txt"] == ("renamed", False)
    assert statuses["gone.txt"] == ("deleted", False)
    assert statuses["logo.png"] == ("added", True)
    assert statuses["keep.py"] == ("modified", False)
    assert statuses["geo.py"] == ("added", False)


def test_every_range_form_names_what_git_would(tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    first = repo.git("rev-parse", "HEAD~1").strip()
    head = repo.git("rev-parse", "HEAD").strip()
    third = repo.commit("third", **{"geo_DOT_py": "changed\n"})
    repo.git("checkout", "-q", "-b", "topic")
    topic = repo.commit("on topic", **{"t_DOT_txt": "t\n"})
    repo.git("checkout", "-q", "main")
    git = Git.open(repo.path)

    assert git.resolve("HEAD~2").base == first and git.resolve("HEAD~2").head == third
    assert (git.resolve(f"{first}..{head}").base, git.resolve(f"{first}..{head}").head) == (
        first, head)
    single = git.resolve(head[:10])
    assert (single.base, single.head) == (first, head)
    assert [c.sha for c in git.commits(single)] == [head]
    branch = git.resolve("topic")
    assert (branch.base, branch.head) == (third, topic)
    assert [c.title for c in git.commits(git.resolve("HEAD~2"))] == ["third", "feature"]


def test_head_is_the_working_tree_and_index_against_head(tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    repo.write("keep.py", "x = 3\ny = 4\n")  # unstaged
    repo.write("staged.py", "# FIXME: staged\n")
    repo.git("add", "staged.py")
    git = Git.open(repo.path)
    at = git.resolve("HEAD")
    assert at.worktree and not git.commits(at)
    assert _as_numstat(git, "HEAD") == repo.numstat("HEAD")
    assert {r.path for r in git.numstat(at)} == {"keep.py", "staged.py"}
    assert git.show("", "keep.py") == b"x = 3\ny = 4\n"


def test_a_root_commit_is_reviewed_against_the_empty_tree(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    root = repo.commit("root", **{"a_DOT_py": "# TODO: first\n"})
    git = Git.open(repo.path)
    at = git.resolve(root)
    assert [(r.path, r.status, r.additions) for r in git.numstat(at)] == [("a.py", "added", 1)]
    assert [c.sha for c in git.commits(at)] == [root]


@pytest.mark.parametrize("spec", ["nope", "HEAD~9", "HEAD~9..HEAD", "main..nope", "", "--all"])
def test_a_bad_range_says_which_and_why(tmp_path: Path, spec: str) -> None:
    git = Git.open(review_repo(tmp_path / "r").path)
    with pytest.raises(BadRange, match="range") as caught:
        git.resolve(spec)
    assert "\n" not in str(caught.value)


def test_a_directory_that_is_not_a_repository_is_named(tmp_path: Path) -> None:
    with pytest.raises(NotARepository, match=f"{tmp_path}: not a git repository"):
        Git.open(tmp_path)
    with pytest.raises(NotARepository, match="no such directory"):
        Git.open(tmp_path / "missing")


def test_a_lone_branch_has_nothing_to_be_compared_with(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("one", **{"a_DOT_txt": "a\n"})
    with pytest.raises(BadRange, match=r"write it as BASE\.\.main"):
        Git.open(repo.path).resolve("main")


def test_the_branch_under_review_and_where_it_merged(tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    repo.git("branch", "at-main")  # at main's tip: main already holds it
    repo.git("checkout", "-q", "-b", "topic")
    topic = repo.commit("on topic", **{"t_DOT_txt": "t\n"})
    git = Git.open(repo.path)
    for spec in ("topic", "main..topic", "main...topic", "HEAD~1", topic):
        assert git.branch_of(spec, git.resolve(spec)) == "topic", spec
    assert git.branch_of("HEAD", git.resolve("HEAD")) == ""  # uncommitted: merges nowhere
    assert git.branch_of("main~1..main", git.resolve("main~1..main")) == ""
    assert git.merged_into(topic, "topic") is None
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "merge topic", "topic")
    assert git.merged_into(topic, "topic") == "main"
    assert git.merged_into(topic, "main") is None  # a branch is not merged into itself
    with pytest.raises(GitError):  # git's failure is a failure, not a "no"
        git.merged_into("0" * 40, "topic")
