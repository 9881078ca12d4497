"""The per-file diff helpers every host's review operations share (hosts/diffs.py)."""

from __future__ import annotations

from livereview.core.model import DiffRefs, Identity, InlineComment, Side
from livereview.hosts.diffs import (
    anchor_of,
    count_lines,
    hunks,
    looks_binary,
    own_general_comments,
    split_git_diff,
)
from tests.factories import ALICE, BOT, IDENTITY, msg, snapshot, thread

GIT_DIFF = (
    "diff --git a/q.sql b/q.sql\nindex 1..2 100644\n--- a/q.sql\n+++ b/q.sql\n"
    "@@ -1,2 +1,2 @@\n--- an SQL comment\n+-- a better one\n select 1;\n"
    "diff --git a/logo.png b/logo.png\nnew file mode 100644\nindex 0..3\n"
    "Binary files /dev/null and b/logo.png differ\n"
    "diff --git a/old name.py b/new b/name.py\nsimilarity index 90%\n"
    "rename from old name.py\nrename to new b/name.py\n--- a/old name.py\n"
    "+++ b/new b/name.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n")


def test_lines_are_counted_in_hunks_only() -> None:
    # A removed `-- comment` reads `--- comment`: a header only before the first hunk.
    assert count_lines(GIT_DIFF.split("diff --git a/logo")[0]) == (1, 1)
    assert count_lines("@@ -1 +1,2 @@\n-a\n+b\n+c\n\\ No newline at end of file\n") == (2, 1)
    assert count_lines("") == (0, 0)


def test_a_git_diff_splits_into_files_by_their_headers() -> None:
    parts = split_git_diff(GIT_DIFF)
    assert parts[("q.sql", "q.sql")].startswith("diff --git a/q.sql")
    assert looks_binary(parts[("logo.png", "logo.png")])
    renamed = parts[("old name.py", "new b/name.py")]  # " b/" inside a path
    assert hunks(renamed) == "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    assert not looks_binary(parts[("q.sql", "q.sql")])
    assert split_git_diff("") == {}


def test_hunks_drop_the_headers_and_keep_a_hunks_only_diff() -> None:
    assert hunks("@@ -1 +1 @@\n-a\n+b\n") == "@@ -1 +1 @@\n-a\n+b\n"
    assert hunks("diff --git a/x b/x\nold mode 100644\nnew mode 100755\n") == ""
    # a hunk line that looks like a header stays a line
    assert looks_binary("@@ -1 +1 @@\n-Binary files are fun\n+x\n") is False


def test_an_inline_comment_means_the_anchor_each_host_expects() -> None:
    refs = DiffRefs("base", "start", "head")
    removed = anchor_of(refs, InlineComment("a.py", 7, Side.OLD, "gone"))
    assert (removed.new_line, removed.old_line, removed.old_path) == (None, 7, "a.py")
    context = anchor_of(refs, InlineComment("b.py", 9, Side.NEW, "ctx", "a.py", old_line=8))
    assert (context.new_line, context.old_line, context.old_path) == (9, 8, "a.py")
    assert (context.base_sha, context.start_sha, context.head_sha) == ("base", "start", "head")


def test_the_bots_summaries_are_its_general_thread_starts() -> None:
    anchor = anchor_of(DiffRefs("b", "s", "h"), InlineComment("a.py", 1, Side.NEW, "x"))
    summary = msg("1", BOT, "Summary", thread="t1")
    snap = snapshot(
        thread("t1", summary, msg("2", ALICE, "thanks", thread="t1")),
        thread("t2", msg("3", BOT, "finding", thread="t2"), anchor=anchor),
        thread("t3", msg("4", ALICE, "a question", thread="t3")),
        thread("t4", msg("5", BOT, "added 1 commit", thread="t4", system=True)))
    assert own_general_comments(snap, IDENTITY) == [summary]
    assert own_general_comments(snap, Identity("gl", "0", "nobody")) == []
