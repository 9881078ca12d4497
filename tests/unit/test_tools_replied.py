"""Replied state: the daemon's posted reply jobs and tool replies, per repository (the same
comment id on two repos never collides), kept across a restart; and the comment filter that
reads it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from livereview.core.model import JobReason, MRKey, ReplyRequest
from livereview.core.triggers import bot_replies, reply_marker
from livereview.store import jobs
from livereview.store import replied as replied_rows
from livereview.store.db import Store
from livereview.tools.comments import select_comments
from tests.databases import url_for
from tests.factories import ALICE, BOT, IDENTITY, KEY, T0, msg, snapshot, thread

OTHER_REPO = MRKey(KEY.host, "group/other", KEY.iid)  # same host and iid, same comment ids


def _open(tmp_path: Path) -> Store:
    return Store.open(url_for(tmp_path / "state" / "livereview.db"))


def _daemon_replied(store: Store, key: MRKey, comment_id: str, reply_id: str) -> None:
    request = ReplyRequest(key, "t1", comment_id, JobReason.MENTION, T0)
    ((job_id, _),) = store.transaction(jobs.enqueue, [request], T0)
    store.transaction(jobs.mark_posted, job_id, reply_id, T0 + timedelta(minutes=1),
                      citations=[], lesson=None)


def _tool_replied(store: Store, key: MRKey, comment_id: str, reply_id: str) -> None:
    store.transaction(replied_rows.begin_tool_reply, key, comment_id, "t1", "digest", T0)
    store.transaction(replied_rows.finish_tool_reply, key, comment_id, reply_id,
                      T0 + timedelta(minutes=2))


def test_replied_state_is_per_repository_and_survives_a_restart(tmp_path: Path) -> None:
    store = _open(tmp_path)
    _daemon_replied(store, KEY, "5", "50")
    _tool_replied(store, OTHER_REPO, "5", "51")
    store.transaction(replied_rows.begin_tool_reply, KEY, "6", "t2", "digest", T0)  # in doubt
    store.close()

    store = _open(tmp_path)  # a new process: the same answers
    here = store.transaction(replied_rows.replied_in, KEY)
    there = store.transaction(replied_rows.replied_in, OTHER_REPO)
    elsewhere = store.transaction(replied_rows.replied_in, MRKey(KEY.host, "group/third", 7))
    assert {c: (r.reply_id, r.source) for c, r in here.items()} == {"5": ("50", "daemon")}
    assert {c: (r.reply_id, r.source) for c, r in there.items()} == {"5": ("51", "tool")}
    assert elsewhere == {}
    attempt = store.transaction(replied_rows.tool_attempt, KEY, "6")
    assert attempt is not None and attempt.reply_id == "" and attempt.thread_id == "t2"

    history = store.transaction(replied_rows.history)
    assert [(r.repo, r.comment_id, r.source) for r in history] == [
        (KEY.repo, "5", "daemon"), (OTHER_REPO.repo, "5", "tool")]  # oldest first
    assert [r.repo for r in store.transaction(replied_rows.history, repo=OTHER_REPO.repo)] \
        == [OTHER_REPO.repo]
    later = store.transaction(replied_rows.history, since=T0 + timedelta(minutes=2))
    assert [r.source for r in later] == ["tool"]
    store.close()


def test_the_filter_leaves_out_replied_comments_and_the_bots_own() -> None:
    snap = snapshot(
        thread("t1", msg("1", body="@livereview why?"), msg("2", BOT, "Because.", at=1),
               msg("3", ALICE, "and then?", at=2)),
        thread("t2", msg("4", body="a second question", thread="t2")),
        thread("t3", msg("5", body="added 1 commit", thread="t3", system=True)))
    mark = replied_rows.Replied(KEY.host, KEY.repo, KEY.iid, "1", "2", T0, "daemon")
    default = select_comments(snap, IDENTITY, {"1": mark})
    assert [c.id for c in default.comments] == ["3", "4"]
    assert (default.total, default.returned, default.left_out_replied,
            default.left_out_own) == (4, 2, 1, 1)
    everything = select_comments(snap, IDENTITY, {"1": mark}, include_replied=True)
    assert [c.id for c in everything.comments] == ["1", "2", "3", "4"]
    assert everything.comments[0].replied and everything.comments[0].reply_id == "2"
    assert everything.comments[0].replied_by == "daemon"
    assert everything.comments[1].author_kind == "self"
    assert (everything.left_out_replied, everything.left_out_own) == (0, 0)


@given(st.lists(st.tuples(st.sampled_from(["ask", "answer", "other-bot"]),
                          st.integers(0, 11)), max_size=12),
       st.sets(st.integers(0, 11), max_size=4))
def test_no_comment_the_daemon_counts_answered_is_listed_as_open(
        posts: list[tuple[str, int]], recorded: set[int]) -> None:
    """Whatever the store holds, `comments` and the daemon's trigger filter agree: a
    comment with the bot's marked reply on the host is never offered as open."""
    messages = []
    for n, (kind, target) in enumerate(posts):
        author, body = ALICE, f"@livereview question {n}"
        if kind == "answer":
            author, body = BOT, f"An answer.\n\n{reply_marker(str(target))}"
        elif kind == "other-bot":  # someone else's copy of the marker answers nothing
            body = f"Quoted.\n\n{reply_marker(str(target))}"
        messages.append(msg(str(n), author, body, at=n))
    snap = snapshot(thread("t1", *messages))
    rows = {str(r): replied_rows.Replied(KEY.host, KEY.repo, KEY.iid, str(r), "x", T0, "tool")
            for r in recorded}
    marks = replied_rows.answered(KEY, rows, bot_replies(snap, IDENTITY))
    listed = {c.id for c in select_comments(snap, IDENTITY, marks).comments}
    assert not listed & set(bot_replies(snap, IDENTITY))
    assert not listed & set(rows)
    for comment_id, reply in bot_replies(snap, IDENTITY).items():
        assert marks[comment_id].source == ("tool" if comment_id in rows else "host")
        assert reply.author == BOT
