"""Figure (informational): `livereview web` page timings for a 10-file and a 3 000-file
local review — the index, the review's page, one file's diff (loaded when opened), and the
live fragment a page fetches after each change; then, in headless Chromium when installed,
when the review page is usable (DOMContentLoaded, load) and how long opening a file takes.

The server is the real command (`livereview web --listen 127.0.0.1:0`) in another process,
over a real git repository; the client is httpx2 on loopback, so each figure is the server's
work plus one local round trip. The review page lists every file but renders no diff: its
time grows with the file count, not with the diff's size.

    .venv/bin/python bench/fig_web.py
"""

from __future__ import annotations

import asyncio
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx2
from common import Row

from livereview.tools import local_review as ops

REPEAT = 7
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SIZES = (10, 3000)
_SERVING = re.compile(r"serving (http://\S+/)")


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)  # noqa: S603, S607


def make_repo(root: Path, files: int) -> Path:
    repo = root / f"r{files}"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Bench")
    git(repo, "config", "user.email", "bench@example.test")
    (repo / "README.md").write_text("# bench\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    for n in range(files):
        module = repo / f"pkg{n // 100}" / f"mod{n}.py"
        module.parent.mkdir(exist_ok=True)
        module.write_text("".join(f"def f{i}(x):\n    return x * {i}  # step {n}\n"
                                  for i in range(20)))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{files} files")
    return repo


async def request(repo: Path) -> None:
    ws = ops.open_workspace(repo)
    try:
        await ops.request(ws, "HEAD~1", f"{repo.name}: a review", '{"bench": true}')
    finally:
        ws.close()


def timed(client: httpx2.Client, url: str) -> tuple[float, int]:
    best: list[float] = []
    size = 0
    for _ in range(REPEAT):
        started = time.perf_counter()
        response = client.get(url)
        best.append(time.perf_counter() - started)
        response.raise_for_status()
        size = len(response.content)
    return statistics.median(best) * 1000, size


def in_browser(url: str, number: int) -> tuple[float, float, float] | None:
    """Headless Chromium (when installed): the review page's DOMContentLoaded and load, as
    the browser's Navigation Timing says, and from a click on the first file to its diff."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options,
                              service=Service(executable_path=str(CHROMEDRIVER)))
    try:
        driver.get(f"{url}r/{number}/1")
        timing = driver.execute_script(
            "const n = performance.getEntriesByType('navigation')[0];"
            "return [n.domContentLoadedEventEnd, n.loadEventEnd];")
        started = time.perf_counter()
        driver.find_element("css selector", ".file-toggle").click()
        WebDriverWait(driver, 120, poll_frequency=0.005).until(
            lambda d: d.find_elements("css selector", ".file-diff"))
        return float(timing[0]), float(timing[1]), (time.perf_counter() - started) * 1000
    finally:
        driver.quit()


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    """Figure 18 for bench/run.py: informational rows (no target), one per page."""
    print("\n## 18. `livereview web` page timings (median ms, loopback)")
    pages: dict[str, list[str]] = {}
    main(pages)
    return [Row(f"18. web: {page}, {' / '.join(str(s) for s in SIZES)} files",
                " / ".join(values) + " ms (median)") for page, values in pages.items()]


def main(pages: dict[str, list[str]] | None = None) -> int:
    pages = {} if pages is None else pages
    with tempfile.TemporaryDirectory() as scratch:
        repos = [make_repo(Path(scratch), n) for n in SIZES]
        for repo in repos:
            asyncio.run(request(repo))
        args = [sys.executable, "-m", "livereview", "web", "--listen", "127.0.0.1:0"]
        for repo in repos:
            args += ["--repo", str(repo)]
        server = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)  # noqa: S603
        try:
            assert server.stderr is not None
            url = ""
            for line in server.stderr:
                if found := _SERVING.search(line):
                    url = found[1]
                    break
            with httpx2.Client(base_url=url, timeout=120) as client:
                print(f"{'review':>12} {'page':<12} {'median ms':>10} {'bytes':>10}")
                index_ms, index_bytes = timed(client, "/")
                print(f"{'both':>12} {'index':<12} {index_ms:>10.1f} {index_bytes:>10}")
                for number, files in enumerate(SIZES):
                    base = f"/r/{number}/1"
                    for page, path in (("review", base), ("one diff", f"{base}/file?path="
                                                                     "pkg0/mod0.py"),
                                       ("live", f"{base}/live")):
                        ms, size = timed(client, path)
                        pages.setdefault(page, []).append(f"{ms:.1f}")
                        print(f"{files:>7} files {page:<12} {ms:>10.1f} {size:>10}")
            print("\nin headless Chromium (ms): DOMContentLoaded, load, click → first diff")
            for number, files in enumerate(SIZES):
                seen = in_browser(url, number)
                if seen is None:
                    print("  (no /usr/bin/chromium + chromedriver: skipped)")
                    break
                print(f"{files:>7} files {seen[0]:>10.1f} {seen[1]:>10.1f} {seen[2]:>10.1f}")
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
