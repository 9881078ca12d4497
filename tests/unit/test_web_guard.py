"""The web face's guard, over the real app and a real repository's store (Starlette's test
client, no browser): security headers on every response, CSRF token and Origin checks on
every state change, the Host check against DNS rebinding, token sign-in, the proxy header;
and a GET never writes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from livereview.core.local_model import ReviewStatus
from livereview.settings import Secret
from livereview.tools import local_browse
from livereview.tools import local_review as ops
from livereview.web.app import create_app
from livereview.web.guard import CSP, Access
from livereview.web.site import Site
from tests.local_repo import Repo

BASE = "http://127.0.0.1:8470"
TOKEN = "a-token-of-enough-length-0123456789"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "r")
    repo.commit("base", a_DOT_py="a = 1\n")
    repo.commit("two", a_DOT_py="a = 2  # TODO: name it\n")
    return repo


def client(repo: Repo, access: Access | None = None) -> Iterator[TestClient]:
    ws = ops.open_workspace(repo.path)
    with TestClient(create_app(Site([ws]), access or Access()), base_url=BASE) as web:
        yield web


@pytest.fixture
async def review(repo: Repo) -> int:
    ws = ops.open_workspace(repo.path)
    try:
        return (await ops.request(ws, "HEAD~1", "T")).id
    finally:
        ws.close()


@pytest.fixture
def web(repo: Repo, review: int) -> Iterator[TestClient]:
    yield from client(repo)


def csrf(web: TestClient, path: str = "/r/0/1") -> str:
    found = re.search(r'<meta name="csrf" content="([0-9a-f]+)">', web.get(path).text)
    assert found is not None
    return found[1]


async def status(repo: Repo) -> ReviewStatus:
    ws = ops.open_workspace(repo.path)
    try:
        return (await ops.review_of(ws, 1)).status
    finally:
        ws.close()


def test_every_response_carries_the_security_headers(web: TestClient) -> None:
    for response in (web.get("/"), web.get("/r/0/1"), web.get("/r/0/99"),
                     web.get("/static/app.js"), web.post("/r/0/1/verdict")):
        assert response.headers["content-security-policy"] == CSP
        assert "'unsafe-inline'" not in CSP and "frame-ancestors 'none'" in CSP
        assert response.headers["x-content-type-options"] == "nosniff"
        assert response.headers["referrer-policy"] == "no-referrer"
    cookie = web.get("/").headers.get("set-cookie", "") or web.cookies.get("livereview_session")
    assert cookie


async def test_a_same_origin_post_with_the_token_is_the_cli_s_approve(
        web: TestClient, repo: Repo) -> None:
    token = csrf(web)
    done = web.post("/r/0/1/verdict", data={"csrf": token, "verdict": "approve"},
                    headers={"Origin": BASE, "Sec-Fetch-Site": "same-origin",
                             "Accept": "application/json"})
    assert (done.status_code, done.json()) == (200, {"ok": True})
    assert await status(repo) is ReviewStatus.APPROVED


async def test_a_post_without_this_session_s_csrf_token_is_refused_and_changes_nothing(
        web: TestClient, repo: Repo) -> None:
    csrf(web)
    for sent in ({}, {"csrf": "0" * 64}, {"csrf": ""}):
        refused = web.post("/r/0/1/verdict", data={**sent, "verdict": "approve"},
                           headers={"Origin": BASE})
        assert refused.status_code == 403
    assert await status(repo) is ReviewStatus.PENDING


async def test_a_post_from_another_site_is_refused_even_with_a_valid_token(
        web: TestClient, repo: Repo) -> None:
    token = csrf(web)
    for headers in ({"Origin": "http://evil.test"}, {"Origin": "null"},
                    {"Origin": "http://127.0.0.1:9999"}, {"Sec-Fetch-Site": "cross-site"},
                    {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Site": "none"},
                    {"Origin": "null", "Sec-Fetch-Site": "cross-site"},
                    {"Origin": "http://evil.test", "Sec-Fetch-Site": "same-origin"}):
        refused = web.post("/r/0/1/verdict", data={"csrf": token, "verdict": "approve"},
                           headers=headers)
        assert (refused.status_code, "another site" in refused.text) == (403, True), headers
    assert await status(repo) is ReviewStatus.PENDING


async def test_a_plain_form_post_of_the_page_itself_is_taken_though_its_origin_is_null(
        web: TestClient, repo: Repo) -> None:
    """What Chromium sends for the page's own form under Referrer-Policy: no-referrer
    (Fetch standard, "serializing a request origin"); the browser test saw it refused."""
    done = web.post("/r/0/1/verdict", data={"csrf": csrf(web), "verdict": "approve"},
                    headers={"Origin": "null", "Sec-Fetch-Site": "same-origin"},
                    follow_redirects=False)
    assert (done.status_code, done.headers["location"]) == (303, "/r/0/1")
    assert await status(repo) is ReviewStatus.APPROVED


def test_a_host_header_that_is_not_loopback_is_refused_against_dns_rebinding(
        web: TestClient) -> None:
    refused = web.get("/r/0/1", headers={"Host": "attacker.test:8470"})
    assert refused.status_code == 400
    assert "T" not in refused.text.split(":")[0]  # the review is not shown


async def test_no_get_changes_anything(web: TestClient, repo: Repo) -> None:
    ws = ops.open_workspace(repo.path)
    try:
        before = await local_browse.change_mark(ws, 1)
        export = (repo.path / ".livereview" / "review.json").read_bytes()
        for path in ("/", "/r/0/1", "/r/0/1/file?path=a.py", "/r/0/1/live",
                     "/r/0/1/verdict?verdict=approve", "/r/0/1/reply?thread=1&text=x",
                     "/r/0/1/resolve?thread=1&resolved=1", "/r/0/1/comment?text=x"):
            assert web.get(path).status_code in (200, 405), path
        assert await local_browse.change_mark(ws, 1) == before
        assert (repo.path / ".livereview" / "review.json").read_bytes() == export
    finally:
        ws.close()


def test_with_a_token_a_browser_signs_in_once_and_gets_a_new_session(
        repo: Repo, review: int) -> None:
    for web in client(repo, Access(token=Secret(TOKEN), loopback_only=False)):
        assert web.get("/r/0/1", follow_redirects=False).headers["location"] == "/login"
        assert web.post("/r/0/1/verdict", data={"verdict": "approve"}).status_code == 401
        token = csrf(web, "/login")
        before = web.cookies.get("livereview_session")
        wrong = web.post("/login", data={"csrf": token, "token": "not-it"},
                         headers={"Origin": BASE})
        assert wrong.status_code == 401 and TOKEN not in wrong.text
        assert web.get("/r/0/1", follow_redirects=False).status_code == 303
        signed = web.post("/login", data={"csrf": token, "token": TOKEN},
                          headers={"Origin": BASE}, follow_redirects=False)
        assert signed.status_code == 303
        assert web.cookies.get("livereview_session") != before  # no session fixation
        page = web.get("/r/0/1")
        assert page.status_code == 200 and TOKEN not in page.text


def test_a_script_may_send_the_token_as_a_bearer(repo: Repo, review: int) -> None:
    for web in client(repo, Access(token=Secret(TOKEN), loopback_only=False)):
        assert web.get("/", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
        assert web.get("/", headers={"Authorization": "Bearer nope"},
                       follow_redirects=False).status_code == 303


def test_behind_a_proxy_only_requests_naming_a_user_are_let_in(repo: Repo, review: int) -> None:
    for web in client(repo, Access(trusted_header="x-forwarded-user", loopback_only=False)):
        assert web.get("/", headers={"X-Forwarded-User": "ada"}).status_code == 200
        assert web.get("/", follow_redirects=False).status_code == 303
        assert web.get("/", headers={"X-Forwarded-User": " "},
                       follow_redirects=False).status_code == 303
