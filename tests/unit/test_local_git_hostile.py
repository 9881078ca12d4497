"""A repository whose own git config or working tree is hostile: reading it runs nothing
of its choosing and cannot be made to hang or fill memory."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from pathlib import Path

import pytest

from livereview.hosts.local.git import MAX_FILE_BYTES, REPO_ENV, Git, GitError
from tests.local_repo import Repo


def _tripwire(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A script that, if git ever runs it, leaves a file behind (and the file's path)."""
    ran = tmp_path / f"{name}-ran"
    script = tmp_path / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch '{ran}'\n", encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, ran


def _working_tree_with_new_file(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "r")
    repo.commit("base", a_DOT_py="x = 1\n")
    repo.write("a.py", "x = 2  # a different size: no racy-clean stat match\n")
    repo.write("new.py", "y = 1\n")  # untracked: added to a throwaway index with `add -N`
    return repo


def test_a_repository_s_fsmonitor_command_never_runs_when_its_changes_are_read(
        tmp_path: Path) -> None:
    repo = _working_tree_with_new_file(tmp_path)
    script, ran = _tripwire(tmp_path, "fsmonitor")
    repo.git("config", "core.fsmonitor", str(script))
    git = Git.open(repo.path)
    at = git.resolve("HEAD")
    assert {r.path for r in git.numstat(at)} == {"a.py", "new.py"}
    assert "+y = 1" in git.diff(at)
    assert not ran.exists()


def test_a_repository_s_hooks_never_run_when_its_untracked_files_are_added_for_the_diff(
        tmp_path: Path) -> None:
    repo = _working_tree_with_new_file(tmp_path)
    script, ran = _tripwire(tmp_path, "hook")
    hooks = repo.path / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    os.symlink(script, hooks / "post-index-change")
    elsewhere = tmp_path / "hooks-elsewhere"
    elsewhere.mkdir()
    os.symlink(script, elsewhere / "post-index-change")
    git = Git.open(repo.path)
    assert {r.path for r in git.numstat(git.resolve("HEAD"))} == {"a.py", "new.py"}
    repo.git("config", "core.hooksPath", str(elsewhere))  # the config's own hooks folder
    assert "+y = 1" in git.diff(git.resolve("HEAD"))
    assert not ran.exists()


def test_a_repository_s_signature_program_never_runs_when_its_commits_are_listed(
        tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("base", a_DOT_py="x = 1\n")
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    parent = repo.git("rev-parse", "HEAD").strip()
    # A commit carrying a signature header, as a clone can: `log --show-signature` would
    # hand it to gpg.program.
    signed = (f"tree {tree}\nparent {parent}\nauthor A <a@b> 1700000000 +0000\n"
              f"committer A <a@b> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n"
              f" x\n -----END PGP SIGNATURE-----\n\nsigned\n")
    (repo.path / "commit.txt").write_text(signed, encoding="utf-8")
    sha = repo.git("hash-object", "-t", "commit", "-w", "commit.txt").strip()
    (repo.path / "commit.txt").unlink()
    repo.git("update-ref", "refs/heads/main", sha)
    script, ran = _tripwire(tmp_path, "gpg")
    repo.git("config", "log.showSignature", "true")
    repo.git("config", "gpg.program", str(script))
    git = Git.open(repo.path)
    assert [c.title for c in git.commits(git.resolve(sha[:12]))] == ["signed"]
    assert not ran.exists()


def test_a_fifo_in_place_of_a_tracked_file_is_refused_without_waiting_for_a_writer(
        tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("base", a_DOT_py="x = 1\n")
    pipe = repo.path / "a.py"
    pipe.unlink()
    os.mkfifo(pipe)
    opened: list[str] = []

    def writer() -> None:  # blocks until a reader opens the FIFO, then feeds it
        with open(pipe, "wb") as out:
            opened.append("by the reader" if not released.is_set() else "by the test")
            out.write(b"from the pipe\n")

    released = threading.Event()
    feeding = threading.Thread(target=writer)
    feeding.start()
    try:
        with pytest.raises(GitError, match="not a regular file"):
            Git.open(repo.path).show("", "a.py")
    finally:
        released.set()
        os.close(os.open(pipe, os.O_RDONLY | os.O_NONBLOCK))  # lets the writer go
        feeding.join()
    assert opened == ["by the test"]


def test_a_working_tree_file_past_the_limit_is_refused_unread(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("base", a_DOT_py="x = 1\n")
    with (repo.path / "huge.bin").open("wb") as out:
        out.truncate(10 * 2**30)  # sparse: ten gigabytes that take no room
    with pytest.raises(GitError, match="larger than"):
        Git.open(repo.path).show("", "huge.bin")


def test_a_committed_blob_past_the_limit_is_refused_unread(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    with (repo.path / "zeros.bin").open("wb") as out:
        out.truncate(MAX_FILE_BYTES + 1)  # packs to almost nothing in a clone
    head = repo.commit("zeros")
    with pytest.raises(GitError, match="larger than"):
        Git.open(repo.path).show(head, "zeros.bin")


@pytest.mark.parametrize("path", [".git/config", ".env", "build/out.txt", "../outside.txt",
                                  "", "build"])
def test_only_files_the_review_could_show_are_read_from_the_working_tree(
        tmp_path: Path, path: str) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("base", a_DOT_py="x = 1\n", _DOT_gitignore=".env\nbuild/\n")
    repo.git("config", "remote.origin.url", "https://user:secret-token@example.test/r.git")
    repo.write(".env", "TOKEN=secret-token\n")
    repo.write("build/out.txt", "secret-token\n")
    (tmp_path / "outside.txt").write_text("secret-token\n", encoding="utf-8")
    repo.write("new.py", "y = 1\n")
    git = Git.open(repo.path)
    assert git.show("", "new.py") == b"y = 1\n"  # untracked, not ignored: under review
    with pytest.raises(GitError) as refused:
        git.show("", path)
    assert "secret" not in str(refused.value)


def test_a_symlink_in_the_working_tree_reads_as_its_target_s_name_as_git_shows_it(
        tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    (tmp_path / "secret.txt").write_text("secret-token\n", encoding="utf-8")
    repo.commit("base", a_DOT_py="x = 1\n")
    os.symlink("../secret.txt", repo.path / "link")
    repo.git("add", "link")
    repo.git("commit", "-qm", "link")
    git = Git.open(repo.path)
    assert git.show("", "link") == git.show("HEAD", "link") == b"../secret.txt"


def test_the_variables_left_out_of_git_s_environment_are_git_s_own_list() -> None:
    listed = subprocess.run(["git", "rev-parse", "--local-env-vars"],  # noqa: S607
                            capture_output=True, text=True, check=True).stdout.split()
    assert set(listed) <= REPO_ENV


def test_a_review_started_from_another_repository_s_git_hook_reads_the_repository_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    named = Repo(tmp_path / "named")
    named.commit("named base", a_DOT_py="x = 1\n")
    named.commit("named change", a_DOT_py="x = 2\n")
    named.write("new.py", "y = 1\n")
    other = Repo(tmp_path / "other")
    other.commit("other base", b_DOT_py="z = 1\n")
    other.commit("other change", b_DOT_py="z = 2\n")
    # What git exports to a pre-commit hook of `other`.
    monkeypatch.setenv("GIT_DIR", str(other.path / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(other.path / ".git" / "index"))
    git = Git.open(named.path)
    assert git.top == named.path
    assert [c.title for c in git.commits(git.resolve("HEAD~1"))] == ["named change"]
    assert {r.path for r in git.numstat(git.resolve("HEAD"))} == {"new.py"}
