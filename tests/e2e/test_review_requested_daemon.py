"""`livereview run` as a real subprocess against the fake GitLab: a review request starts
one review, a SIGKILL and a restart do not start it again, a re-request does; an edited
question gets one answer to the edit, a cosmetic edit none. Every wait is for something
the daemon did (a row, a note), never for time."""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any

from livereview.core.model import EDIT_SUFFIX
from livereview.core.triggers import replied_to
from livereview.reply.compose import EDITED_LEAD
from tests.databases import query
from tests.e2e.conftest import PROJECT, Daemon, Sandbox, wait_for


def _started(sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> Daemon:
    """A daemon that has listed the MRs once (its store is made by then)."""
    before = len(sandbox.gitlab.requests)
    daemon = start_daemon()
    wait_for(lambda: any(r[1].endswith("/merge_requests")
                         for r in sandbox.gitlab.requests[before:]))
    return daemon


def _runs(db: str) -> list[tuple[Any, ...]]:
    return query(db, "SELECT trigger, state FROM review_runs ORDER BY id")


def _stored_body(db: str, note_id: object) -> str:
    rows = query(db, "SELECT body FROM mr_messages WHERE host_message_id = "
                 ":id", id=str(note_id))
    return str(rows[0][0]) if rows else ""


def _answers(sandbox: Sandbox, note_id: object) -> list[str]:
    return [str(n["body"]) for n in sandbox.bot_notes()
            if (replied_to(str(n["body"])) or "").split(EDIT_SUFFIX)[0] == str(note_id)]


def test_a_review_request_survives_a_kill_and_restart_once_and_a_rerequest_runs_again(
        sandbox: Sandbox, sandbox_database: str, start_daemon: Callable[[], Daemon]
        ) -> None:
    """On SQLite and on PostgreSQL (`sandbox_database`, docs/DESIGN.md §12)."""
    gitlab, iid = sandbox.gitlab, sandbox.iid
    daemon = _started(sandbox, start_daemon)
    gitlab.set_reviewers(PROJECT, iid, ["livereview"], by="alice")
    wait_for(lambda: _runs(sandbox_database) == [("requested", "done")])
    daemon.stop(signal.SIGKILL)
    note = sandbox.note("@livereview is this lock needed?")  # read after the restart
    _started(sandbox, start_daemon)
    wait_for(lambda: len(_answers(sandbox, note["id"])) == 1)
    assert _runs(sandbox_database) == [("requested", "done")]  # the restart asked nothing again
    gitlab.rerequest_review(PROJECT, iid, "livereview", by="alice")
    wait_for(lambda: len(_runs(sandbox_database)) == 2)
    wait_for(lambda: _runs(sandbox_database) == [("requested", "done")] * 2)


def test_an_edit_gets_one_answer_and_a_cosmetic_edit_none_while_the_daemon_runs(
        sandbox: Sandbox, sandbox_database: str, start_daemon: Callable[[], Daemon]
        ) -> None:
    """On SQLite and on PostgreSQL (`sandbox_database`, docs/DESIGN.md §12)."""
    _started(sandbox, start_daemon)
    note = sandbox.note("@livereview is this lock needed?")
    wait_for(lambda: len(_answers(sandbox, note["id"])) == 1)
    cosmetic = "@LiveReview: is this lock neeedd??"
    sandbox.gitlab.edit_note(PROJECT, sandbox.iid, int(str(note["id"])), cosmetic)
    wait_for(lambda: _stored_body(sandbox_database, note["id"]) == cosmetic)  # diffed and decided
    new = "@livereview is this lock needed for writes as well?"
    sandbox.gitlab.edit_note(PROJECT, sandbox.iid, int(str(note["id"])), new)
    wait_for(lambda: len(_answers(sandbox, note["id"])) == 2)
    assert _answers(sandbox, note["id"])[1].startswith(EDITED_LEAD)
    jobs = query(sandbox_database, "SELECT reason FROM reply_jobs ORDER BY id")
    assert jobs == [("mention",), ("edited_question",)]
