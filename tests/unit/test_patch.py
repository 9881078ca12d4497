"""`mr diff`'s text is a patch: each file's hunks under git's own headers. git is the
oracle — it applies the patch, and it quotes a hostile name exactly as we do."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from livereview.tools.patch import as_patch, quoted
from livereview.tools.results import FileDiff
from tests.local_repo import Repo

ODD = 'sp\u00e4ce\nnew "file" \\ \u200b\t.txt'  # a line break, quotes, a backslash, non-ASCII


def item(path: str, status: str, diff: str, *, old: str = "", note: str = "") -> FileDiff:
    return FileDiff(path=path, old_path=old or path, status=status, additions=0, deletions=0,
                    binary=False, diff=diff, note=note)


def git(repo: Repo, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo.path, input=stdin, text=True,  # noqa: S603, S607
                          capture_output=True, check=False)


def test_every_kind_of_file_applies_with_git_apply(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("base", mod_DOT_txt="a\nb\n", gone_DOT_txt="x\n", ren_DOT_txt="r\n",
                move_DOT_txt="m\n", pic_DOT_png="\x89PNG")
    patch = "".join(as_patch(i) for i in (
        item("new.txt", "added", "@@ -0,0 +1 @@\n+hello\n"),
        item("gone.txt", "removed", "@@ -1 +0,0 @@\n-x\n"),
        item("mod.txt", "modified", "@@ -1,2 +1,2 @@\n a\n-b\n+c"),  # no final newline
        item("pic.png", "modified", "", note="binary file: no text diff"),
        item("moved.txt", "renamed", "", old="ren.txt"),
        item("elsewhere.txt", "renamed", "@@ -1 +1 @@\n-m\n+n\n", old="move.txt"),
        item(ODD, "added", "@@ -0,0 +1 @@\n+q\n"),
        item("empty.txt", "added", ""),
    ))
    applied = git(repo, "apply", "--index", "-", stdin=patch)
    assert applied.returncode == 0, applied.stderr + patch
    assert (repo.path / "new.txt").read_text() == "hello\n"
    assert not (repo.path / "gone.txt").exists()
    assert (repo.path / "mod.txt").read_text() == "a\nc\n"
    assert (repo.path / "moved.txt").read_text() == "r\n" and not (repo.path / "ren.txt").exists()
    assert (repo.path / "elsewhere.txt").read_text() == "n\n"
    assert (repo.path / ODD).read_text() == "q\n"
    assert (repo.path / "empty.txt").read_text() == ""
    assert patch.count("\ndiff --git ") + patch.startswith("diff --git ") == 7
    assert "# pic.png: binary file: no text diff\n" in patch


@pytest.mark.parametrize("name", ["plain.txt", "with space.txt", ODD, "caf\u00e9.py",
                                  'q"uote.txt', "back\\slash", "bell\a\x7f.txt", "\u2028x"])
def test_names_are_quoted_as_git_quotes_them(tmp_path: Path, name: str) -> None:
    repo = Repo(tmp_path / "r")
    repo.write(name, "x\n")
    repo.git("add", "--", name)
    header = git(repo, "-c", "core.quotePath=true", "diff", "--cached").stdout.split("\n")[0]
    assert header == f"diff --git {quoted('a/', name)} {quoted('b/', name)}"


def test_a_hostile_name_cannot_forge_a_header_line() -> None:
    forged = "x.txt\ndiff --git a/etc/passwd b/etc/passwd"
    patch = as_patch(item(forged, "added", "@@ -0,0 +1 @@\n+q\n"))
    assert [line for line in patch.splitlines() if line.startswith("diff --git")] == [
        f"diff --git {quoted('a/', forged)} {quoted('b/', forged)}"]
    assert "\\n" in patch.splitlines()[0]


def _unquoted(text: str) -> bytes:
    """git's unquote_c_style (quote.c): the bytes a quoted name stands for."""
    if not text.startswith('"'):
        return text.encode()
    body, out, at = text[1:-1], bytearray(), 0
    named = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
    while at < len(body):
        if body[at] != "\\":
            out.append(ord(body[at]))
            at += 1
        elif body[at + 1] in named:
            out.append(named[body[at + 1]])
            at += 2
        else:
            out.append(int(body[at + 1:at + 4], 8))
            at += 4
    return bytes(out)


@given(st.text(min_size=1))
def test_any_name_quotes_to_one_printable_ascii_line_git_reads_back(name: str) -> None:
    shown = quoted("a/", name)
    assert shown.isascii() and shown.isprintable()
    assert _unquoted(shown) == ("a/" + name).encode("utf-8", "surrogatepass")
