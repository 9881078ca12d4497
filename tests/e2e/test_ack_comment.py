"""Hosts without reactions (Bitbucket Cloud) are acknowledged with a short reply: one per
question, even across a crash, and it never counts as an answer or against the loop guards.

The fake GitLab stands in for such a host through a Host that reports no reactions: the
worker's side is what is tested here; each host's own adapter passes the contract suite."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlmodel import Session

from livereview.app.daemon import App
from livereview.core.triggers import acked_for, replied_to
from livereview.hosts.base import Host
from livereview.metrics import Metrics
from livereview.settings import load
from livereview.store import jobs
from livereview.store.db import Store
from tests.databases import execute
from tests.e2e.conftest import PROJECT, Sandbox

P = ParamSpec("P")
R = TypeVar("R")


class NoReactions:
    """The real adapter, as a host without a reactions API would present itself."""

    def __init__(self, real: Host) -> None:
        self._real = real
        self.capabilities = dataclasses.replace(real.capabilities, reactions=False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


class CrashAfterAck(Store):
    """The real store, except that recording the first ACKED state fails as a crash would
    lose it: the ack comment is on the host, the store does not know it was done."""

    def __init__(self, real: Store) -> None:
        super().__init__(real.engine)
        self.crashed = False

    async def run(self, fn: Callable[Concatenate[Session, P], R], *args: P.args,
                  **kwargs: P.kwargs) -> R:
        if fn is jobs.mark_acked and not self.crashed:
            self.crashed = True
            raise RuntimeError("killed before the commit")
        return await super().run(fn, *args, **kwargs)


def app_without_reactions(sandbox: Sandbox) -> App:
    app = App.create(load(sandbox.config), metrics=Metrics())
    app.hosts["gl"] = NoReactions(app.hosts["gl"])
    return app


def thread_of(sandbox: Sandbox, note_id: object) -> list[dict[str, Any]]:
    return next(d["notes"] for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
                if any(n["id"] == note_id for n in d["notes"]))


async def test_a_question_gets_one_ack_reply_then_its_answer_in_the_same_thread(
        sandbox: Sandbox) -> None:
    question = sandbox.note("@livereview is this lock needed?")
    app = app_without_reactions(sandbox)
    try:
        await app.once()
    finally:
        await app.close()
    notes = thread_of(sandbox, question["id"])
    ack, answer = notes[1], notes[2]
    assert acked_for(ack["body"]) == str(question["id"])
    assert ack["body"].startswith("👀 Looking into this…")
    assert replied_to(answer["body"]) == str(question["id"])
    assert sandbox.gitlab.awards_on(PROJECT, sandbox.iid, question["id"]) == []
    assert app.metrics.acks.labels("gitlab", "ok")._value.get() == 1


async def test_a_crash_after_the_ack_comment_never_posts_a_second_one(
        sandbox: Sandbox) -> None:
    question = sandbox.note("@livereview is this lock needed?")
    app = app_without_reactions(sandbox)
    try:
        await app.cycle(cold=True)
        store = CrashAfterAck(app.store)
        app.store = app.worker.store = app.worker.composer.store = store
        await app.worker.drain()  # acked on the host, the state not recorded
        execute(sandbox.db, "UPDATE reply_jobs SET next_attempt_at = created_at")
        await app.worker.drain()  # the job resumes: it finds its ack and answers
    finally:
        await app.close()
    notes = thread_of(sandbox, question["id"])
    assert [acked_for(n["body"]) for n in notes].count(str(question["id"])) == 1
    assert [replied_to(n["body"]) for n in notes].count(str(question["id"])) == 1


async def test_ack_replies_do_not_count_against_the_loop_guard(sandbox: Sandbox) -> None:
    """Six questions from one person in one thread, each acked and answered: twelve bot
    comments, but six replies — under max_exchange_replies (10), so all are answered."""
    sandbox.config.write_text(sandbox.config.read_text()
                              + "\n[bot]\nautomated_reply_seconds = 0\n")
    first = sandbox.note("@livereview question 0?")
    app = app_without_reactions(sandbox)
    try:
        await app.once()
        discussion = next(str(d["id"]) for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
                          if d["notes"][0]["id"] == first["id"])
        for i in range(1, 6):
            sandbox.gitlab.add_note(PROJECT, sandbox.iid, author="alice",
                                    body=f"and question {i}?", reply_to_discussion=discussion)
            await app.once()
    finally:
        await app.close()
    notes = thread_of(sandbox, first["id"])
    assert sum(1 for n in notes if replied_to(n["body"])) == 6
    assert sum(1 for n in notes if acked_for(n["body"])) == 6
