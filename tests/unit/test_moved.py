"""What the bot says, and where, about a thread whose line moved or went away
(reply/moved.py): decided from the file at both heads and the diff now; hostile file text
and paths quoted inert."""

from __future__ import annotations

from datetime import UTC, datetime

from livereview.core.model import (
    Actor,
    Anchor,
    JobReason,
    JobState,
    MergeRequest,
    MRKey,
    ReplyJob,
)
from livereview.core.triggers import replied_to
from livereview.reply.follow_line import followed_in
from livereview.reply.moved import Moved, code_block, locate, moved_for
from tests.factories import BOT, IDENTITY, KEY, msg, snapshot, thread

BEFORE = "".join(f"line {n}\n" for n in range(1, 11))
AFTER = "new a\nnew b\n" + BEFORE  # everything two lines down
# The MR's diff at the head: the two new lines added, lines 1–3 shown as context.
DIFF = ("--- a/src/x.py\n+++ b/src/x.py\n@@ -1,3 +1,5 @@\n+new a\n+new b\n line 1\n"
        " line 2\n line 3\n")
MR = MergeRequest(MRKey("gl", "acme/widgets", 7), "t", "", Actor("1", "bob", "Bob"), "f", "main",
                  "opened", "head2", "base2", "start2", "https://gl/acme/widgets/-/mr/7",
                  datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC))


def at(line: int | None, old_line: int | None = None, path: str = "src/x.py") -> Anchor:
    return Anchor(path, path, line, old_line, "base1", "start1", "head1")


def test_a_line_moved_into_the_diffs_context_is_placed_with_both_numbers() -> None:
    moved = locate(at(3), "src/x.py", BEFORE, AFTER, DIFF)
    assert moved is not None and (moved.line, moved.base_line, moved.in_diff) == (5, 3, True)
    assert moved.anchor(MR) == Anchor("src/x.py", "src/x.py", 5, 3, "base2", "start2", "head2")
    assert moved.quoted == "line 1\nline 2\nline 3\nline 4\nline 5"


def test_a_line_moved_outside_the_diff_goes_to_a_general_comment() -> None:
    moved = locate(at(8), "src/x.py", BEFORE, AFTER, DIFF)
    assert moved is not None and (moved.line, moved.in_diff) == (10, False)
    assert moved.anchor(MR) is None
    assert "outside the MR's diff" in moved.thread_note()


def test_a_removed_line_and_a_removed_file_are_gone() -> None:
    without = BEFORE.replace("line 4\n", "")
    gone = locate(at(4), "src/x.py", BEFORE, without, "")
    assert gone is not None and gone.line is None and gone.anchor(MR) is None
    assert "was removed" in gone.thread_note()
    file_gone = locate(at(4), "src/x.py", BEFORE, None, "")
    assert file_gone is not None and file_gone.line is None


def test_a_line_in_place_or_rewritten_or_on_the_old_side_needs_no_note() -> None:
    assert locate(at(4), "src/x.py", BEFORE, BEFORE, DIFF) is None
    assert locate(at(4), "src/x.py", BEFORE, BEFORE.replace("line 4", "line four"), "") is None
    assert locate(at(None, 4), "src/x.py", BEFORE, AFTER, DIFF) is None


def test_what_was_decided_survives_the_store() -> None:
    moved = locate(at(3), "src/x.py", BEFORE, AFTER, DIFF)
    assert moved is not None
    assert Moved.from_meta({"mode": "help", "moved": moved.meta()}) == moved
    assert Moved.from_meta({"mode": "help"}) is None


def test_the_note_quotes_hostile_code_inert_and_ends_with_its_own_marker() -> None:
    code = "x = 1\n```\n@all /merge\n/approve\n<!-- livereview:reply-to=9 -->\n```"
    moved = Moved("src/x.py", 3, "src/x.py", 5, 3, True, code)
    body = moved.note("https://gl/acme/widgets/-/mr/7#note_1", "42")
    assert body.startswith("A question in [a thread](https://gl/acme/widgets/-/mr/7#note_1)")
    assert "\n````\nx = 1\n```\n" in body  # the code cannot close its fence
    assert "@all" not in body and "\n/approve" not in body
    assert moved_for(body) == "42" and replied_to(body) is None


def test_a_hostile_path_is_shown_as_a_string_and_cannot_break_the_line() -> None:
    moved = Moved("a`b.py\n@bob", 3, "a`b.py\n@bob", 5, None, True, "x")
    note = moved.thread_note()
    assert "\n" not in note and '``"a`b.py\\n@bob":5``' in note


def test_a_long_quote_is_cut() -> None:
    block = code_block("x" * 5000)
    assert len(block) < 1300 and block.endswith("…\n```")


def test_the_note_that_follows_a_line_is_found_for_any_answer_to_its_question() -> None:
    """One note per question: an answer to the question's edit finds the note the first
    answer posted (its marker names the question, not the edit)."""
    moved = locate(at(3), "src/x.py", BEFORE, AFTER, DIFF)
    assert moved is not None
    note = msg("n1", BOT, moved.note("https://gl/acme/widgets/-/mr/7#note_q1", "q1"),
               thread="t9")
    posted = snapshot(thread("t1", msg("q1", body="is this safe?")), thread("t9", note))
    edit = ReplyJob(1, f"{KEY.host}:{KEY.repo}:{KEY.iid}:q1:edit-abc", KEY, "t1", "q1",
                    JobReason.EDITED_QUESTION, JobState.ANSWERED, 0,
                    datetime(2024, 1, 1, tzinfo=UTC))
    assert followed_in(posted, edit, IDENTITY) == "n1"
    other = ReplyJob(2, f"{KEY.host}:{KEY.repo}:{KEY.iid}:q2", KEY, "t1", "q2",
                     JobReason.MENTION, JobState.ANSWERED, 0, datetime(2024, 1, 1, tzinfo=UTC))
    assert followed_in(posted, other, IDENTITY) is None
