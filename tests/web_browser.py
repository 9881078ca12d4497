"""`livereview web` in another process and Debian's headless Chromium driving it, for the
browser tests and docs/screenshots.py. Selenium is given the driver's path: Selenium
Manager never runs, nothing is downloaded.

Every wait is on an event: the server's "serving" line, a DOM condition (WebDriverWait).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = Path(os.environ.get("LIVEREVIEW_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("LIVEREVIEW_CHROMEDRIVER", "/usr/bin/chromedriver"))
_SERVING = re.compile(r"serving (http://\S+/)")
NO_AI = ("OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL", "LIVEREVIEW_CONFIG")


def missing_browser() -> str:
    """Why the browser tests cannot run here, or ""."""
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not path.exists():
            return f"{path} is missing (apt-get install {package})"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return ""


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in NO_AI}
    return {**env, **extra}


class WebServer:
    """`livereview web --listen 127.0.0.1:0 --repo …`, its URL read from its stderr."""

    def __init__(self, repos: Sequence[Path], *extra: str) -> None:
        args = [sys.executable, "-m", "livereview", "web", "--listen", "127.0.0.1:0"]
        for repo in repos:
            args += ["--repo", str(repo)]
        self.process = subprocess.Popen(  # noqa: S603 - this interpreter, fixed arguments
            [*args, *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            env=environment())
        self.lines: list[str] = []
        assert self.process.stderr is not None
        self.url = ""
        for line in self.process.stderr:  # blocks until the server says where it serves
            self.lines.append(line)
            found = _SERVING.search(line)
            if found:
                self.url = found[1]
                break
        if not self.url:
            raise RuntimeError("livereview web did not start: " + "".join(self.lines))
        self._drain = threading.Thread(target=self._read, daemon=True)
        self._drain.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@contextmanager
def serving(repos: Sequence[Path], *extra: str) -> Iterator[WebServer]:
    server = WebServer(repos, *extra)
    try:
        yield server
    finally:
        server.stop()


def chrome(width: int = 1280, height: int = 900):  # type: ignore[no-untyped-def]
    """Headless Chromium with its console log kept (CSP violations are logged there)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 f"--window-size={width},{height}", "--disable-extensions",
                 "--no-first-run", "--disable-background-networking"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=str(CHROMEDRIVER)))
