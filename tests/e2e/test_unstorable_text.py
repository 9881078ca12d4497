"""Text no database can store does not stop an MR from syncing (found on PostgreSQL).

A comment carrying NUL (PostgreSQL's text refuses it) or a lone surrogate (a JSON
"\\ud800" escape; no UTF-8 writer takes it) failed its MR's sync on every cycle: every
mention on that MR, anyone's, went unanswered for good. The CI's PostgreSQL pass found it
through the property test of test_attacks.py; this pins it on both back ends.
"""

from __future__ import annotations

import pytest

from livereview.core.triggers import replied_to
from tests.e2e.conftest import Sandbox

pytestmark = pytest.mark.usefixtures("sandbox_database")  # SQLite and PostgreSQL


@pytest.mark.parametrize("odd", ["\x00", "\ud800"])
def test_a_comment_with_unstorable_text_leaves_its_mr_answering(sandbox: Sandbox,
                                                                odd: str) -> None:
    hostile = sandbox.note(f"@livereview why {odd} this?")
    assert sandbox.once() == 0
    other = sandbox.note("@livereview and is this lock needed?")
    assert sandbox.once() == 0
    answered = {replied_to(str(n["body"])) for n in sandbox.bot_notes()}
    assert {str(hostile["id"]), str(other["id"])} <= answered
