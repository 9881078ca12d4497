"""PR-Agent, the peer of figure 17, in a virtual environment of its own (never the project's).

`install()` creates `~/.cache/livereview-bench/pr-agent-<version>` (or under
`$LIVEREVIEW_BENCH_CACHE`) once: the published wheel from PyPI, its own pins, except the few
its registry no longer serves (pr-agent 0.2.4 pins litellm 1.43.13, which PyPI has removed;
later releases need Python ≥ 3.12) — those are relaxed and printed. `patch()` applies the
two-line change its GitHub poller needs to talk to a GitHub Enterprise Server (it hard-codes
api.github.com's notifications URL, and parses the API form of a pull request's URL only on
api.github.com) to the installed copy, and returns the diff to print.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

VERSION = "0.2.4"
# name → what replaces its pin: the pins PyPI cannot satisfy today, and test-only packages.
RELAXED = {"litellm": "litellm==1.53.1", "openai": "openai", "anthropic": "anthropic[vertex]",
           "pytest": "", "pytest-cov": ""}
POLLER = "pr_agent/servers/github_polling.py"
# The GHES patch, (published line, patched line): the notifications URL from the configured
# base URL, and the subject's API URL (…/api/v3/repos/o/r/pulls/1) turned into the web form
# (…/o/r/pull/1) that the provider parses on any host other than api.github.com (the
# fake's subject URLs have the github.com form even under /api/v3: both are handled).
PATCH = (
    ('NOTIFICATION_URL = "https://api.github.com/notifications"',
     'NOTIFICATION_URL = get_settings().get("GITHUB.BASE_URL", "https://api.github.com")'
     '.rstrip("/") + "/notifications"'),
    ("pr_url = notification['subject']['url']",
     "pr_url = notification['subject']['url'].replace(\"/api/v3/\", \"/\")"
     ".replace(\"/repos/\", \"/\", 1).replace(\"/pulls/\", \"/pull/\")"),
)


class PeerUnavailable(Exception):
    """The peer could not be installed or patched; the message is one line."""


@dataclass(frozen=True)
class Peer:
    python: Path
    site: Path
    relaxed: tuple[str, ...]
    diff: str


def cache_dir() -> Path:
    root = os.environ.get("LIVEREVIEW_BENCH_CACHE") or str(Path.home() / ".cache")
    return Path(root) / "livereview-bench" / f"pr-agent-{VERSION}"


def _run(args: list[str], what: str, timeout: float = 900) -> str:
    env = {**os.environ, "PIP_CONSTRAINT": "", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    try:
        done = subprocess.run(args, capture_output=True, text=True, env=env,  # noqa: S603
                              timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PeerUnavailable(f"{what}: {type(exc).__name__}: {exc}") from None
    if done.returncode != 0:
        last = [ln for ln in done.stderr.splitlines() if ln.startswith("ERROR")] or [
            ln for ln in done.stderr.splitlines() if ln.strip()][-1:] or ["no output"]
        raise PeerUnavailable(f"{what} failed (exit {done.returncode}): {last[-1][:200]}")
    return done.stdout


def _requirements(wheel: Path) -> tuple[list[str], list[str]]:
    """(requirements to install, the pins that were relaxed) from the wheel's metadata."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        lines = z.read(meta).decode().splitlines()
    wanted, relaxed = [], []
    for line in lines:
        if not line.startswith("Requires-Dist:") or ";" in line:
            continue
        spec = line.removeprefix("Requires-Dist:").replace(" ", "")
        name = spec.split("[")[0].split("=")[0].split("<")[0].split(">")[0].lower()
        if name in RELAXED:
            relaxed.append(f"{spec} → {RELAXED[name] or 'not installed'}")
            if RELAXED[name]:
                wanted.append(RELAXED[name])
        else:
            wanted.append(spec)
    return wanted, relaxed


def install() -> Peer:
    venv = cache_dir()
    python = venv / "bin" / "python"
    marker = venv / "relaxed.txt"
    if not (python.exists() and marker.exists()):
        print(f"installing pr-agent {VERSION} into {venv} (its own virtual environment) …")
        base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
        _run([str(base), "-m", "venv", "--clear", str(venv)], "python -m venv", 120)
        wheels = venv / "wheel"
        _run([str(python), "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels),
              f"pr-agent=={VERSION}"], f"pip download pr-agent=={VERSION}")
        wheel = next(wheels.glob("pr_agent-*.whl"))
        wanted, relaxed = _requirements(wheel)
        _run([str(python), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
             "pip install pr-agent")
        _run([str(python), "-m", "pip", "install", "-q", *wanted], "pip install its requirements")
        marker.write_text("\n".join(relaxed) + "\n", encoding="utf-8")
    site = Path(_run([str(python), "-c", "import pr_agent, os; "
                      "print(os.path.dirname(os.path.dirname(pr_agent.__file__)))"],
                     "import pr_agent", 300).strip())
    relaxed_pins = tuple(marker.read_text(encoding="utf-8").split("\n")[:-1])
    return Peer(python, site, relaxed_pins, patch(site / POLLER))


def patch(poller: Path) -> str:
    """Applies PATCH to the installed poller (once; the published copy is kept beside it
    as .orig) and returns the unified diff."""
    original = poller.with_suffix(".py.orig")
    if not original.exists():
        original.write_text(poller.read_text(encoding="utf-8"), encoding="utf-8")
    text = original.read_text(encoding="utf-8")
    for published, patched in PATCH:
        if text.count(published) != 1:
            raise PeerUnavailable(f"the GHES patch does not apply to {poller}: "
                                  f"{published!r} not found once")
        text = text.replace(published, patched)
    poller.write_text(text, encoding="utf-8")
    return "".join(difflib.unified_diff(
        original.read_text(encoding="utf-8").splitlines(keepends=True),
        text.splitlines(keepends=True), fromfile=f"a/{POLLER}", tofile=f"b/{POLLER}", n=0))
