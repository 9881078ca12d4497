"""The operator's console, lessons room: a proposed lesson is listed (its text escaped),
approved, rejected or archived by a person's POST from the page — the same rows as
`livereview lessons approve|reject|archive` — and never by another site's."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from livereview.core.model import Lesson
from livereview.store import lessons as lesson_rows
from livereview.store.db import Store
from livereview.tools import local_review as ops
from livereview.tools.lessons_queue import LessonQueue
from livereview.web.app import create_app
from livereview.web.guard import Access
from livereview.web.site import Site
from tests.databases import url_for
from tests.local_repo import Repo

BASE = "http://127.0.0.1:8470"
HOSTILE = '<img src=x onerror="window.__xss=1">'


def seeded(url: str) -> int:
    store = Store.open(url)
    try:
        lesson, _ = store.transaction(lesson_rows.propose, Lesson(
            key=f"Radius {HOSTILE}", value="Prefer math.tau over 2 * math.pi",
            scope="global", created_by="ada"), datetime.now(UTC))
        return lesson.id
    finally:
        store.close()


def status_of(url: str, lesson_id: int) -> str:
    store = Store.open(url)
    try:
        lesson = store.transaction(lesson_rows.get, lesson_id)
        assert lesson is not None
        return lesson.status
    finally:
        store.close()


@pytest.fixture
def database(tmp_path: Path) -> str:
    return url_for(tmp_path / "daemon.db")


@pytest.fixture
def web(tmp_path: Path, database: str) -> Iterator[TestClient]:
    repo = Repo(tmp_path / "r")
    repo.commit("base", a_DOT_py="a = 1\n")
    seeded(database)
    site = Site([ops.open_workspace(repo.path)], None, LessonQueue(Store.open(database)))
    with TestClient(create_app(site, Access()), base_url=BASE) as client:
        yield client


def csrf(web: TestClient) -> str:
    found = re.search(r'name="csrf" content="([0-9a-f]+)"', web.get("/lessons").text)
    assert found is not None
    return found[1]


def test_a_proposed_lesson_is_listed_with_its_text_escaped(web: TestClient) -> None:
    page = web.get("/lessons").text
    assert "Prefer math.tau over 2 * math.pi" in page and "status-proposed" in page
    assert HOSTILE not in page and "&lt;img src=x" in page
    assert 'href="/lessons"' in web.get("/").text  # the console is linked from every page


def test_approving_in_the_page_makes_the_lesson_active(web: TestClient, database: str) -> None:
    done = web.post("/lessons/decide", data={"csrf": csrf(web), "lesson": "1",
                                             "verdict": "approve"},
                    headers={"Origin": BASE}, follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, "/lessons")
    assert status_of(database, 1) == "active"
    web.post("/lessons/decide", data={"csrf": csrf(web), "lesson": "1", "verdict": "archive"},
             headers={"Origin": BASE})
    assert status_of(database, 1) == "archived"


def test_another_site_s_post_or_a_bad_verdict_changes_no_lesson(
        web: TestClient, database: str) -> None:
    token = csrf(web)
    refused = web.post("/lessons/decide", data={"csrf": token, "lesson": "1",
                                                "verdict": "approve"},
                       headers={"Origin": "http://evil.test"})
    assert refused.status_code == 403
    assert web.post("/lessons/decide", data={"lesson": "1", "verdict": "approve"},
                    headers={"Origin": BASE}).status_code == 403
    bad = web.post("/lessons/decide", data={"csrf": token, "lesson": "1", "verdict": "delete"},
                   headers={"Origin": BASE})
    assert bad.status_code == 400 and "not one of approve" in bad.text
    assert web.post("/lessons/decide", data={"csrf": token, "lesson": "99",
                                             "verdict": "approve"},
                    headers={"Origin": BASE}).status_code == 400
    assert web.get("/lessons/decide?lesson=1&verdict=approve").status_code == 405
    assert status_of(database, 1) == "proposed"
