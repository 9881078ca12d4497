"""The operator's console in a real browser: a proposed lesson is shown, a person approves
it with a click, and the next answer — a reply written on a local review's page, answered
by the sandbox model through the config's workflow — is given the lesson."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from selenium.common.exceptions import TimeoutException

from livereview.core.model import Lesson
from livereview.sandbox.llm_server import LABEL, FakeLLMServer
from livereview.store import lessons as lesson_rows
from livereview.store.db import Store
from livereview.tools import local_review as ops
from tests.e2e.test_web_browser import chrome, css, in_process, open_file, shown, until
from tests.local_repo import review_repo
from tests.web_browser import serving

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]  # as test_web_browser.py
__all__ = ["chrome"]  # the fixture, shared
RULE = "Prefer math.tau over 2 * math.pi"


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


def test_a_lesson_approved_in_the_browser_is_given_to_the_next_answer(
        tmp_path: Path, chrome: Any, llm: FakeLLMServer) -> None:
    repo = review_repo(tmp_path / "r")
    database = f"sqlite:///{tmp_path / 'daemon.db'}"
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[daemon]\ndatabase_url = "{database}"\nmetrics_listen = ""\n\n'
        f'[ai]\nbase_url = "{llm.url}"\nmodel = "sandbox"\napi_key_env = ""\n\n'
        '[[hosts]]\nname = "laptop"\ntype = "local"\n\n'
        f'[[repos]]\nhost = "laptop"\npath = "{repo.path}"\n', encoding="utf-8")
    store = Store.open(database)
    try:
        lesson, _ = store.transaction(lesson_rows.propose, Lesson(
            key="Circle constants", value=RULE, scope="global", created_by="ada"),
            datetime.now(UTC))
    finally:
        store.close()
    review = in_process(repo, lambda ws: ops.request(ws, "HEAD~1", "Geo"))
    todo = next(t.id for t in review.threads if "math.pi" in t.messages[0].body)

    with serving([], "--config", str(config)) as server:
        chrome.get(f"{server.url}lessons")
        row = f"#lesson-{lesson.id}"
        assert RULE in css(chrome, row).text and "proposed" in css(chrome, row).text
        css(chrome, f"{row} button.approve").click()
        until(chrome, shown(f"{row} .status", "active"))

        chrome.get(server.url)
        css(chrome, 'a.review-link[href="/r/0/1"]').click()
        until(chrome, lambda d: d.execute_script("return document.body.dataset.live === '1'"))
        geo = open_file(chrome, "geo.py")
        geo.find_element("css selector", f"#thread-{todo} textarea").send_keys(
            "@livereview why not math.pi?")
        geo.find_element("css selector", f"#thread-{todo} .reply-form button").click()
        try:
            until(chrome, shown(f"#thread-{todo}", LABEL.strip("*")))  # rendered: no stars
        except TimeoutException:
            pytest.fail("no answer on the page; the server said:\n" + "".join(server.lines))
    asked = [m["content"] for prompt in llm.llm.prompts for m in prompt]
    assert any(RULE in text for text in asked)
