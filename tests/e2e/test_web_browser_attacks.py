"""`livereview web` against hostile input and hostile sites, in a real browser: an XSS corpus
in every field a page shows runs no script (a flag the payloads would set stays unset, no
CSP violation is logged, no `javascript:` link exists), a form posted by another site is
refused and changes nothing, and no GET changes anything."""

from __future__ import annotations

import functools
import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from livereview.core.local_model import ReviewStatus
from livereview.tools import local_review as ops
from tests.e2e.test_web_browser import (
    chrome,
    css,
    in_process,
    open_file,
    open_review,
    until,
)
from tests.local_repo import Repo
from tests.web_browser import serving

pytestmark = [pytest.mark.browser, pytest.mark.timeout(900)]  # as test_web_browser.py
__all__ = ["chrome"]  # the fixture, shared

SET_FLAG = "window.__xss=1"
PAYLOADS = (
    f"<script>{SET_FLAG}</script>",
    f'<img src=x onerror="{SET_FLAG}">',
    f'<svg onload="{SET_FLAG}"><script>{SET_FLAG}</script></svg>',
    f'"><img src=x onerror={SET_FLAG}>',
    f"[a link](javascript:{SET_FLAG})",
    f'<a href="javascript:{SET_FLAG}">raw</a>',
    "![tracking](http://127.0.0.1:9/pixel.png)",
    "\u202eexe.txt\u200b hidden\u2066 text",
)
HOSTILE_FILES = {
    f'<img src=x onerror="{SET_FLAG}">.py': f"x = 1  # TODO: <img src=x onerror={SET_FLAG}>\n",
    f'"><svg onload={SET_FLAG}>.md': f"<script>{SET_FLAG}</script>\n",
    "evil\u202etxt.exe": "rtl\n",
    "zero\u200bwidth.txt": "zw\n",
}
BRANCH = f'x"><svg/onload={SET_FLAG}>'


def hostile_repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "r")
    repo.commit("base", README_DOT_md="# demo\n")
    repo.git("checkout", "-q", "-b", BRANCH)
    for name, content in HOSTILE_FILES.items():
        repo.write(name, content)
    repo.commit("hostile")
    repo.git("checkout", "-q", "main")
    description = json.dumps({p: p for p in PAYLOADS} | {"link": f"javascript:{SET_FLAG}"})

    async def hostile(ws: ops.Workspace) -> None:
        review = await ops.request(ws, BRANCH, f"<script>{SET_FLAG}</script>\u202eeltit",
                                   description)
        for payload in PAYLOADS:
            await ops.reply(ws, review.id, review.threads[0].number, payload)
        await ops.set_status(ws, review.id, ReviewStatus.CHANGES_REQUESTED,
                             "\n\n".join(PAYLOADS))
    in_process(repo, hostile)
    return repo


def no_script_ran(driver: Any) -> None:
    assert driver.execute_script("return window.__xss") is None
    links = driver.execute_script(
        "return Array.from(document.querySelectorAll('a[href]'), a => a.protocol)")
    assert set(links) <= {"http:", "https:"}
    assert driver.execute_script(
        "return document.querySelectorAll('img, svg, iframe, object, embed').length") == 0
    scripts = driver.execute_script(
        "return Array.from(document.scripts, s => s.getAttribute('src'))")
    assert scripts == ["/static/app.js"]
    logged = [e["message"] for e in driver.get_log("browser")]
    assert not [m for m in logged if "Content Security Policy" in m], logged


def test_an_xss_corpus_in_every_field_runs_no_script(tmp_path: Path, chrome: Any) -> None:
    repo = hostile_repo(tmp_path)
    with serving([repo.path]) as server:
        url = server.url
        chrome.get(url)
        until(chrome, lambda d: d.execute_script("return document.body.dataset.ready"))
        no_script_ran(chrome)
        open_review(chrome, url)
        title = css(chrome, "h1.review-title").text
        assert title == f"<script>{SET_FLAG}</script>eltit"  # shown as text, no RTL override
        assert BRANCH in css(chrome, ".facts").text
        for name in HOSTILE_FILES:
            file = open_file(chrome, name)
            assert "\u202e" not in file.text and "\u200b" not in file.text
        shown_names = [f.get_attribute("data-path") for f in
                       chrome.find_elements("css selector", "li.file")]
        assert sorted(shown_names) == sorted(HOSTILE_FILES)  # the real names, as data
        assert "[a link](javascript:" in css(chrome, "#general-threads").text
        no_script_ran(chrome)


class _Attacker(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def attacker_site(root: Path) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Attacker, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_form_posted_by_another_site_is_refused_and_a_get_changes_nothing(
        tmp_path: Path, chrome: Any) -> None:
    repo = Repo(tmp_path / "r")
    repo.commit("base", a_DOT_py="a = 1\n")
    repo.commit("two", a_DOT_py="a = 2\n")
    in_process(repo, lambda ws: ops.request(ws, "HEAD~1", "T"))
    export = repo.path / ".livereview" / "review.json"
    before = export.read_bytes()
    site = tmp_path / "attacker"
    site.mkdir()
    with serving([repo.path]) as server, attacker_site(site) as port:
        url = server.url
        open_review(chrome, url)  # the person has a session with the face
        for origin in (f"http://localhost:{port}", f"http://127.0.0.1:{port}"):
            (site / "attack.html").write_text(
                f'<form id="f" method="post" action="{url}r/0/1/verdict">'
                '<input name="verdict" value="approve"><input name="csrf" value="guess">'
                "</form><script>document.getElementById('f').submit()</script>")
            chrome.get(f"{origin}/attack.html")
            until(chrome, lambda d: d.current_url.startswith(url))
            assert "another site" in chrome.find_element("tag name", "body").text
        for path in ("", "r/0/1", "r/0/1/file?path=a.py", "r/0/1/live",
                     "r/0/1/verdict?verdict=approve&csrf=x", "r/0/1/resolve?thread=1"):
            chrome.get(f"{url}{path}")
    assert export.read_bytes() == before
    assert in_process(repo, lambda ws: ops.review_of(ws, 1)).status is ReviewStatus.PENDING
