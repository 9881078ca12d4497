"""A repository whose own git config or working tree is hostile: reading it runs nothing
of its choosing and cannot be made to hang or fill memory."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from livereview.hosts.local_git import Git
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
    repo.write("a.py", "x = 2\n")
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
