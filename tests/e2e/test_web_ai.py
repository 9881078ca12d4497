"""A reply written in the browser is answered by the AI as `livereview review reply` is
(the same workflow, in the background: the click returns at once, the answer reaches the
page as a change). The sandbox model answers; the face's shutdown waits for the answer."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from livereview.app.local_respond import responder
from livereview.core.local_model import AuthorKind, LocalReview
from livereview.sandbox.llm_server import LABEL, FakeLLMServer
from livereview.tools import local_review as ops
from livereview.web.app import create_app
from livereview.web.guard import Access
from livereview.web.site import Site
from tests.local_repo import review_repo

BASE = "http://127.0.0.1:8470"


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("LIVEREVIEW_CONFIG", raising=False)
    with FakeLLMServer() as server:
        monkeypatch.setenv("LIVEREVIEW_AI_BASE_URL", server.url)
        monkeypatch.setenv("LIVEREVIEW_AI_MODEL", "sandbox")
        yield server


def test_a_reply_posted_in_the_page_is_answered_in_its_thread(
        tmp_path: Path, llm: FakeLLMServer) -> None:
    repo = review_repo(tmp_path / "r")

    async def request() -> LocalReview:
        ws = ops.open_workspace(repo.path)
        try:
            return await ops.request(ws, "HEAD~1", "T")
        finally:
            ws.close()

    review = asyncio.run(request())
    thread = next(t for t in review.threads if "math.pi" in t.messages[0].body)
    site = Site([ops.open_workspace(repo.path)], responder(None))
    with TestClient(create_app(site, Access()), base_url=BASE) as web:
        found = re.search(r'name="csrf" content="([0-9a-f]+)"', web.get("/r/0/1").text)
        assert found is not None
        posted = web.post("/r/0/1/reply", headers={"Origin": BASE, "Accept": "application/json"},
                          data={"csrf": found[1], "thread": str(thread.id),
                                "text": "@livereview why not math.pi?"})
        assert posted.json() == {"ok": True}
    # The app's shutdown waited for the background answer.

    async def answered() -> LocalReview:
        ws = ops.open_workspace(repo.path)
        try:
            return await ops.review_of(ws, 1)
        finally:
            ws.close()

    messages = next(t for t in asyncio.run(answered()).threads if t.id == thread.id).messages
    assert [m.author_kind for m in messages] == [AuthorKind.CODE, AuthorKind.HUMAN,
                                                 AuthorKind.BOT]
    assert LABEL in messages[2].body and "geo.py:3" in messages[2].body
