"""The operator's console in a real browser, served by `livereview web --config` over a
sandbox GitLab polled by `livereview once`: the health page shows the host's last poll, the
pending page a failed job's error, the conversation page the sandbox MR's threads and
jobs (reached from the pending page), the configuration page no token. With
LIVEREVIEW_SCREENSHOTS=DIR the health page is saved as DIR/console.png (docs/img)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from livereview.sandbox.llm_server import LLMFault
from tests.e2e.conftest import TOKEN, Sandbox
from tests.e2e.test_web_browser import chrome, css, shown, until
from tests.web_browser import serving

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]  # as test_web_browser.py
__all__ = ["chrome"]  # the fixture, shared


def test_the_health_page_shows_the_hosts_last_poll_after_once(
        sandbox: Sandbox, chrome: Any) -> None:
    sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    with serving([], "--config", str(sandbox.config)) as server:
        chrome.get(f"{server.url}health")
        until(chrome, lambda d: "healthy" in d.find_element(  # not "unhealthy"
            "css selector", "#verdict").get_attribute("class").split())
        assert "ago" in css(chrome, "#host-1 .last-poll").text
        assert "gl" in css(chrome, "#host-1").text
        shots = os.environ.get("LIVEREVIEW_SCREENSHOTS")
        if shots:
            chrome.save_screenshot(str(Path(shots) / "console.png"))


def test_the_pending_page_shows_a_failed_jobs_error_and_leads_to_its_conversation(
        sandbox: Sandbox, chrome: Any) -> None:
    sandbox.note("@livereview is this lock needed?",
                 position={"new_path": "src/cache.py", "new_line": 9})
    sandbox.config.write_text(sandbox.config.read_text().replace(
        "[daemon]", "[daemon]\nmax_attempts = 1"))
    sandbox.llm.llm.faults.extend(LLMFault(status=500) for _ in range(3))
    assert sandbox.once() == 0
    with serving([], "--config", str(sandbox.config)) as server:
        chrome.get(f"{server.url}pending")
        until(chrome, shown("tr.state-failed .last-error", "HTTP 500"))
        css(chrome, "tr.state-failed a.mr-link").click()
        until(chrome, shown("h1.conversation-title", "Guard the cache with a lock"))
        assert "src/cache.py:9" in css(chrome, ".conv-thread").text
        assert "HTTP 500" in css(chrome, "tr.job.state-failed").text


def test_the_conversation_page_shows_the_sandbox_mrs_threads_and_answer(
        sandbox: Sandbox, chrome: Any) -> None:
    sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    assert sandbox.once() == 0  # sees its own reply
    with serving([], "--config", str(sandbox.config)) as server:
        chrome.get(f"{server.url}recent")
        css(chrome, "tr.answer a.mr-link").click()
        until(chrome, shown("h1.conversation-title", "Guard the cache with a lock"))
        assert css(chrome, "article.actor-human").text.count("is this lock needed?") == 1
        assert "@livereview" in css(chrome, "article.actor-bot").text
        assert "posted" in css(chrome, "tr.job").text


def test_the_configuration_page_names_the_tokens_variable_never_the_token(
        sandbox: Sandbox, chrome: Any) -> None:
    with serving([], "--config", str(sandbox.config)) as server:
        chrome.get(f"{server.url}config")
        until(chrome, shown("table.config", "hosts[0].token_env"))
        assert "LIVEREVIEW_E2E_TOKEN" in css(chrome, "table.config").text
        assert TOKEN not in chrome.page_source
