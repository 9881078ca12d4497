"""Regenerates the web face's screenshots for the docs and the README (never by hand):

    .venv/bin/python docs/screenshots.py        # writes docs/img/local-review.png

A demo repository in a temporary directory, a local review with a person's and an agent's
comments, `livereview web` serving it, and Debian's headless Chromium (as the browser tests:
tests/web_browser.py) opening a file's diff. Needs chromium and chromium-driver
(.ci/install-chromium).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402
from tests.local_repo import review_repo  # noqa: E402
from tests.web_browser import chrome, missing_browser, serving  # noqa: E402

from livereview.core.local_model import AuthorKind  # noqa: E402
from livereview.tools import local_review as ops  # noqa: E402

OUT = ROOT / "docs" / "img" / "local-review.png"


async def _review(repo: Path) -> None:
    ws = ops.open_workspace(repo)
    try:
        review = await ops.request(ws, "HEAD~1", "Cache the area of a circle", (
            '{"task": "geo-7", "plan": ["use math.pi", "cache results"], "tests": "pass"}'))
        question = next(t for t in review.threads if t.path == "geo.py" and t.line == 3)
        await ops.reply(ws, review.id, question.id, "Is `3.14` precise enough here?")
        await ops.reply(ws, review.id, question.id,
                        "It is for the UI; I will switch to `math.pi` anyway.", AuthorKind.AGENT)
        await ops.add_comment(ws, review.id, "Name this `area_of_circle`?", "geo.py", 1)
    finally:
        ws.close()


def main() -> int:
    why = missing_browser()
    if why:
        print(f"docs/screenshots.py: {why}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        repo = review_repo(Path(scratch) / "geo")
        asyncio.run(_review(repo.path))
        with serving([repo.path]) as server:
            driver = chrome(1200, 1500)
            try:
                driver.get(f"{server.url}r/0/1")
                wait = WebDriverWait(driver, 120)
                wait.until(lambda d: d.execute_script("return document.body.dataset.live"))
                geo = next(f for f in driver.find_elements(By.CSS_SELECTOR, "li.file")
                           if f.get_attribute("data-path") == "geo.py")
                geo.find_element(By.CSS_SELECTOR, ".file-toggle").click()
                wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, ".file-diff")))
                OUT.parent.mkdir(parents=True, exist_ok=True)
                driver.save_screenshot(str(OUT))
            finally:
                driver.quit()
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
