"""`livereview web` in a real browser (headless Chromium): a person reviews a local review,
and an agent's `livereview review wait` in another process receives each action; the page
follows the agent's changes without a reload. Selected with `-m browser`; skipped when
Chromium is missing here, failed when it is missing under CI=true."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from selenium.webdriver.common.keys import Keys

from livereview.tools import local_review as ops
from tests.local_repo import Repo, review_repo
from tests.web_browser import chrome as make_chrome
from tests.web_browser import environment, missing_browser, serving

# A browser and two or three processes per test: slow on a loaded machine, never waiting on
# time itself (every wait is on an event), so the bound is generous.
pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]
T = TypeVar("T")
WAIT_SECONDS = 120  # an upper bound for a DOM condition, not a duration anything waits for


def livereview(repo: Repo, *args: str) -> str:
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-m", "livereview", "review", *args, "--repo", str(repo.path)],
        capture_output=True, text=True, env=environment(), check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


class Waiting:
    """An agent's `livereview review wait` in another process."""

    def __init__(self, repo: Repo, review: int = 1) -> None:
        self.process = subprocess.Popen(  # noqa: S603 - this interpreter, fixed arguments
            [sys.executable, "-m", "livereview", "review", "wait", str(review), "--timeout",
             "120", "--repo", str(repo.path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=environment())

    def received(self) -> dict[str, Any]:
        out, err = self.process.communicate(timeout=150)
        assert self.process.returncode == 0, err
        answer: dict[str, Any] = json.loads(out)
        return answer


@pytest.fixture
def chrome() -> Iterator[Any]:
    why = missing_browser()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the browser tests must run in CI: {why}")
        pytest.skip(why)
    driver = make_chrome()
    try:
        yield driver
    finally:
        driver.quit()


def until(driver: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait
    return WebDriverWait(driver, WAIT_SECONDS).until(condition)


def css(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By
    return driver.find_element(By.CSS_SELECTOR, selector)


def shown(selector: str, text: str) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    return ec.text_to_be_present_in_element((By.CSS_SELECTOR, selector), text)


def open_review(driver: Any, url: str, review: int = 1) -> None:
    driver.get(url)
    css(driver, f'a.review-link[href="/r/0/{review}"]').click()
    until(driver, lambda d: d.execute_script("return document.body.dataset.live === '1'"))


def open_file(driver: Any, path: str) -> Any:
    toggles = driver.find_elements("css selector", "li.file")
    file = next(f for f in toggles if f.get_attribute("data-path") == path)
    file.find_element("css selector", ".file-toggle").click()
    until(driver, lambda d: file.find_elements("css selector", ".file-diff"))
    return file


def in_process(repo: Repo, step: Callable[[ops.Workspace], Awaitable[T]]) -> T:
    """A setup step through the same operations, in this process (no interpreter start)."""
    async def run() -> T:
        ws = ops.open_workspace(repo.path)
        try:
            return await step(ws)
        finally:
            ws.close()
    return asyncio.run(run())


def open_file_by_keyboard(driver: Any, path: str) -> Any:
    """`j` moves to the next file, Enter opens it: no mouse."""
    from selenium.webdriver.common.action_chains import ActionChains
    for _ in driver.find_elements("css selector", "li.file"):
        ActionChains(driver).send_keys("j").perform()  # to whatever has the focus
        focused = driver.switch_to.active_element
        file = focused.find_element("xpath", "..")
        if file.get_attribute("data-path") == path:
            ActionChains(driver).send_keys(Keys.ENTER).perform()
            until(driver, lambda d, opened=file: opened.find_elements("css selector",
                                                                      ".file-diff"))
            return file
    raise AssertionError(f"`j` never reached {path}")


def geo_repo(tmp_path: Path) -> Repo:
    repo = review_repo(tmp_path / "r")
    in_process(repo, lambda ws: ops.request(
        ws, "HEAD~1", "Geo", '{"task": "area of a circle", "files": ["geo.py"]}'))
    return repo


def thread_id(repo: Repo, kind: str, path: str) -> int:
    review = in_process(repo, lambda ws: ops.review_of(ws, 1))
    return next(t.id for t in review.threads if t.kind.value == kind and t.path == path)


def test_a_person_reviews_in_the_browser_and_the_waiting_agent_receives_each_action(
        tmp_path: Path, chrome: Any) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    repo = geo_repo(tmp_path)
    explanation = thread_id(repo, "explanation", "geo.py")
    with serving([repo.path]) as server:
        open_review(chrome, server.url)
        assert css(chrome, "h1.review-title").text == "Geo"
        assert "area of a circle" in css(chrome, ".description").text
        geo = open_file(chrome, "geo.py")
        assert "return 3.14 * r * r" in geo.find_element("css selector", "table.code").text
        assert "pi is close enough" in css(chrome, f"#thread-{explanation}").text

        waiting = Waiting(repo)
        box = css(chrome, f"#thread-{explanation} textarea")
        box.send_keys("Is 3.14 really enough for the UI?")
        css(chrome, f"#thread-{explanation} .reply-form button").click()
        got = waiting.received()
        assert [(f["thread"], f["body"]) for f in got["feedback"]] == [
            (explanation, "Is 3.14 really enough for the UI?")]
        until(chrome, shown(f"#thread-{explanation}", "Is 3.14 really enough"))

        waiting = Waiting(repo)
        row = geo.find_element("css selector", 'tr[data-new="1"]')
        ActionChains(chrome).move_to_element(row).perform()
        row.find_element("css selector", ".add-comment").click()
        form = until(chrome, lambda d: geo.find_element("css selector", ".new-thread-form"))
        form.find_element("css selector", "textarea").send_keys("Name this `area_of_circle`")
        form.find_element("css selector", 'button[type="submit"]').click()
        got = waiting.received()
        assert [(f["path"], f["line"], f["body"]) for f in got["feedback"]] == [
            ("geo.py", 1, "Name this `area_of_circle`")]
        until(chrome, lambda d: "area_of_circle" in geo.find_element(
            "css selector", 'tr[data-new="1"] + tr.thread-row').text)

        waiting = Waiting(repo)
        css(chrome, "#verdict-comment").send_keys("Use math.pi, then it is good.")
        css(chrome, "button.request-changes").click()
        got = waiting.received()
        assert (got["status"], got["status_changed"]) == ("changes_requested", True)
        assert [f["body"] for f in got["feedback"]] == ["Use math.pi, then it is good."]
        until(chrome, shown("#review-status", "changes requested"))

        waiting = Waiting(repo)
        css(chrome, "button.approve").click()
        got = waiting.received()
        assert (got["status"], got["status_changed"], got["feedback"]) == ("approved", True, [])
        until(chrome, shown("#review-status", "approved"))


def test_the_page_shows_an_agent_s_update_from_another_process_without_a_reload(
        tmp_path: Path, chrome: Any) -> None:
    repo = geo_repo(tmp_path)
    todo = thread_id(repo, "todo", "geo.py")
    with serving([repo.path]) as server:
        open_review(chrome, server.url)
        geo = open_file_by_keyboard(chrome, "geo.py")
        chrome.execute_script("window.sameDocument = 'yes'")
        box = geo.find_element("css selector", f"#thread-{todo} textarea")
        box.send_keys("Will you use math.pi?", Keys.CONTROL, Keys.ENTER)
        until(chrome, shown(f"#thread-{todo}", "Will you use math.pi?"))

        livereview(repo, "reply", "1", str(todo), "Done: math.pi in the next commit")
        until(chrome, shown(f"#thread-{todo}", "Done: math.pi in the next commit"))
        livereview(repo, "resolve", "1", str(todo))
        until(chrome, shown(f"#thread-{todo}", "resolved"))
        livereview(repo, "approve", "1")
        until(chrome, shown("#review-status", "approved"))

        repo.commit("math.pi", geo_DOT_py="import math\n\n\ndef area(r):\n"
                    "    return math.pi * r * r  # FIXME: negative radius\n")
        livereview(repo, "update", "1", "--range", "HEAD~2..HEAD")
        until(chrome, shown("#review-status", "pending"))
        until(chrome, shown('li.file[data-path="geo.py"]', "negative radius"))  # a new thread
        assert chrome.execute_script("return window.sameDocument") == "yes"
