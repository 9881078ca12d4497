"""The operator's console in a real browser: a proposed lesson is shown, a person approves
it with a click, and the daemon's next answer on the sandbox GitLab is given the lesson."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from livereview.core.model import Lesson
from livereview.store import lessons as lesson_rows
from livereview.store.db import Store
from tests.e2e.conftest import Sandbox
from tests.e2e.test_web_browser import chrome, css, shown, until
from tests.web_browser import serving

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]  # as test_web_browser.py
__all__ = ["chrome"]  # the fixture, shared
RULE = "Prefer math.tau over 2 * math.pi"


def test_a_lesson_approved_in_the_browser_is_given_to_the_next_answer(
        sandbox: Sandbox, chrome: Any) -> None:
    store = Store.open(sandbox.database_url)
    try:
        lesson, _ = store.transaction(lesson_rows.propose, Lesson(
            key="Circle constants", value=RULE, scope="global", created_by="ada"),
            datetime.now(UTC))
    finally:
        store.close()
    sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0  # a proposed lesson is not given to an answer
    assert not any(RULE in m["content"] for m in sandbox.llm.llm.prompts[-1])

    with serving([], "--config", str(sandbox.config)) as server:
        chrome.get(f"{server.url}lessons")
        row = f"#lesson-{lesson.id}"
        assert RULE in css(chrome, row).text and "proposed" in css(chrome, row).text
        css(chrome, f"{row} button.approve").click()
        until(chrome, shown(f"{row} .status", "active"))

    sandbox.note("@livereview and the writes?")
    assert sandbox.once() == 0
    assert any(RULE in m["content"] for m in sandbox.llm.llm.prompts[-1])
