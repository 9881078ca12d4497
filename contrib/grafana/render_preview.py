"""Render docs/dashboard.png: the Grafana dashboard's own queries, evaluated for real.

A documentation tool for the README's picture of livereview-dashboard.json; it is not run
in CI and nothing imports it. No Grafana runs here, so this is the closest real thing:

1. the real daemon runs in-process against the loopback sandbox GitLab and answer engine
   (as `livereview demo` does), with `daemon.metrics_listen` on a free 127.0.0.1 port;
2. Prometheus runs as a subprocess on another free 127.0.0.1 port, scraping that endpoint
   every second into a temporary TSDB;
3. a scripted colleague asks questions on three merge requests at a steady pace (diff-line
   mentions, general mentions, follow-ups in threads the bot answered) while the sandbox
   misbehaves now and then: 429s with `Retry-After: 1`, 502s, LLM 500s, a slow spell;
4. every panel's PromQL `expr` is evaluated through Prometheus's `query_range` API over
   the run (`$host_type` -> `.*`; for runs shorter than 10 minutes the `[5m]` rate windows
   become `[1m]`, and the caption says so);
5. matplotlib draws the panels in their `gridPos` layout, in a Grafana-like dark theme.

Needs matplotlib in the venv (`.venv/bin/pip install matplotlib`; deliberately not a
project dependency) and Debian's `prometheus` package (/usr/bin/prometheus). Usage:

    .venv/bin/python contrib/grafana/render_preview.py [--minutes 4] [--out docs/dashboard.png]

Everything listens on 127.0.0.1 only; Prometheus and the daemon are always stopped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from livereview import log_setup as logs
from livereview.app.daemon import App
from livereview.core.triggers import replied_to
from livereview.sandbox.gitlab.model import diff_lines, unified_diff
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.sandbox.llm_server import FakeLLM, FakeLLMServer, LLMFault
from livereview.settings import Settings, parse

try:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyBboxPatch
    from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator
except ImportError:  # pragma: no cover - a documentation tool's own prerequisite
    sys.exit("render_preview.py needs matplotlib: .venv/bin/pip install matplotlib")

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "contrib" / "grafana" / "livereview-dashboard.json"
DEFAULT_OUT = ROOT / "docs" / "dashboard.png"
PROMETHEUS = "/usr/bin/prometheus"
SCRAPE_SECONDS = 1
STEP_SECONDS = 5
TOKEN = "glpat-preview-sandbox-token"  # noqa: S105 - the sandbox's own token
BOT = "livereview"
PACE_SECONDS = 6.0  # one colleague comment this often, round-robin over the MRs
FOLLOW_UP_AFTER = 8.0  # > bot.automated_reply_seconds: a human answers the bot, not a script

# ---------------------------------------------------------------------------------------
# The sandbox: three merge requests and what the colleagues ask about them
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleMR:
    project: str
    title: str
    author: str
    path: str
    old: str
    new: str
    questions: tuple[str, ...]
    follow_ups: tuple[str, ...]


SAMPLES = (
    SampleMR(
        "demo/webshop", "Guard the price cache with a lock", "bob", "shop/prices.py",
        "import threading\n\n_cache = {}\n\n\ndef price(sku):\n    return _cache.get(sku)\n",
        "import threading\n\n_cache = {}\n_lock = threading.Lock()\n\n\ndef price(sku):\n"
        "    with _lock:\n        return _cache.get(sku)\n\n\ndef put(sku, value):\n"
        "    with _lock:\n        _cache[sku] = value\n",
        ("is this lock needed for a read?", "could a RLock deadlock here?",
         "would functools.lru_cache be simpler?", "does put() need the lock as well?"),
        ("But dict.get is atomic under the GIL, isn't it?", "What about free-threaded 3.13?",
         "OK, and is there a test for it?"),
    ),
    SampleMR(
        "demo/webshop", "Retry payment webhooks with backoff", "carol", "shop/webhooks.py",
        "import requests\n\n\ndef deliver(url, payload):\n"
        "    return requests.post(url, json=payload, timeout=5)\n",
        "import random\nimport time\n\nimport requests\n\n\n"
        "def deliver(url, payload, attempts=5):\n"
        "    for attempt in range(attempts):\n"
        "        response = requests.post(url, json=payload, timeout=5)\n"
        "        if response.status_code < 500:\n            return response\n"
        "        time.sleep(random.uniform(0, 2 ** attempt))\n    return response\n",
        ("is full jitter right here?", "should 429 be retried too?",
         "what happens if every attempt fails?", "is the sleep blocking the event loop?"),
        ("Makes sense. Would you cap the delay?", "And idempotency keys, do we need them?",
         "Thanks, what about logging each retry?"),
    ),
    SampleMR(
        "platform/auth", "Rotate session signing keys daily", "dave", "auth/keys.py",
        "SECRET = load_secret()\n\n\ndef sign(data):\n    return hmac(SECRET, data)\n",
        "from datetime import date\n\nKEYS = load_keys()\n\n\ndef current_key():\n"
        "    return KEYS[date.today().isoformat()]\n\n\ndef sign(data):\n"
        "    return hmac(current_key(), data)\n\n\ndef verify(data, mac):\n"
        "    return any(hmac(k, data) == mac for k in KEYS.values())\n",
        ("is verify() constant-time?", "what happens at midnight UTC?",
         "should old keys expire from KEYS?", "is date.today() the server's time zone?"),
        ("So compare_digest then?", "How many days of keys would you keep?",
         "Good point. Is there a migration path for live sessions?"),
    ),
)


@dataclass
class OpenMR:
    sample: SampleMR
    iid: int
    lines: list[int]  # added lines of its diff: where diff notes may go
    asked: int = 0


@dataclass
class LoadRun:
    """What the load phase did, and the wall-clock window Prometheus should be asked about."""

    start: float = 0.0
    end: float = 0.0
    asked: list[int] = field(default_factory=list)  # note ids the colleague wrote
    answered: int = 0
    trouble: list[str] = field(default_factory=list)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sandbox() -> tuple[FakeGitLab, list[OpenMR]]:
    gitlab = FakeGitLab(token=TOKEN, bot_username=BOT)
    for user in ("alice", "bob", "carol", "dave"):
        gitlab.add_user(user, f"{user.title()} Example")
    mrs = []
    for sample in SAMPLES:
        iid = gitlab.add_mr(sample.project, title=sample.title, author=sample.author,
                            description=f"{sample.title}.", source_branch=f"mr-{sample.path}",
                            files={sample.path: (sample.old, sample.new)})
        added = sorted(new for (old, new) in diff_lines(
            sample.path, unified_diff(sample.old, sample.new)) if old is None and new)
        mrs.append(OpenMR(sample, iid, added))
    return gitlab, mrs


def daemon_settings(gitlab_url: str, llm_url: str, state: Path, metrics_port: int) -> Settings:
    """The documented defaults (3 s hot poll, 30 s cold poll), metrics on loopback."""
    return parse({
        "daemon": {"database_url": f"sqlite:///{state / 'livereview.db'}",
                   "metrics_listen": f"127.0.0.1:{metrics_port}",
                   "shutdown_grace_seconds": 10},
        "ai": {"base_url": llm_url, "model": "sandbox", "api_key_env": ""},
        "hosts": [{"name": "sandbox", "type": "gitlab", "url": gitlab_url,
                   "token_env": "PREVIEW_TOKEN"}],
        "repos": [{"host": "sandbox", "path": p} for p in
                  dict.fromkeys(s.project for s in SAMPLES)],
    }, {"PREVIEW_TOKEN": TOKEN})


def _created(note: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(note["created_at"]).replace("Z", "+00:00")).timestamp()


def comment(gitlab: FakeGitLab, mr: OpenMR, rng: random.Random) -> dict[str, Any]:
    """One colleague comment: a follow-up in a thread the bot answered a while ago, or a new
    question mentioning the bot, on a diff line or on the MR as a whole."""
    sample, author = mr.sample, rng.choice(("alice", "bob", "carol", "dave"))
    threads = [d for d in gitlab.discussions(sample.project, mr.iid)
               if d["notes"][-1]["author"]["username"] == BOT
               and time.time() - _created(d["notes"][-1]) > FOLLOW_UP_AFTER]
    roll = rng.random()
    if threads and roll < 0.35:
        return gitlab.add_note(sample.project, mr.iid, author=author,
                               body=rng.choice(sample.follow_ups),
                               reply_to_discussion=str(rng.choice(threads)["id"]))
    question = f"@{BOT} {sample.questions[mr.asked % len(sample.questions)]}"
    mr.asked += 1
    if roll < 0.7:
        position = {"new_path": sample.path, "new_line": rng.choice(mr.lines)}
        return gitlab.add_note(sample.project, mr.iid, author=author, body=question,
                               position=position)
    return gitlab.add_note(sample.project, mr.iid, author=author, body=question)


def answered(gitlab: FakeGitLab, asked: list[int]) -> int:
    replies = {replied_to(str(n["body"])) for n in gitlab.notes_by(BOT)}
    return sum(1 for note_id in asked if str(note_id) in replies)


async def make_trouble(gitlab: FakeGitLab, server: FakeGitLabServer, llm: FakeLLM,
                       seconds: float, run: LoadRun, say: Callable[[str], None]) -> None:
    """Realistic trouble at fixed points of the run, so the panels are not flat."""

    def rate_limit(times: int) -> None:
        gitlab.inject_fault("GET", r"/merge_requests", status=429, times=times,
                            body='{"message":"429 Too Many Requests"}',
                            headers={"Retry-After": "1"})

    def llm_down(times: int) -> None:  # the OpenAI client retries twice itself
        llm.faults.extend(LLMFault(status=500) for _ in range(times))

    def slow(latency: float) -> None:
        server.latency_seconds = latency

    def bad_gateway() -> None:
        gitlab.inject_fault("GET", r"/discussions", status=502, body="<html>502</html>")

    plan: list[tuple[float, str, Callable[[], None]]] = [
        (0.18, "2 x 429 Retry-After: 1", lambda: rate_limit(2)),
        (0.30, "LLM 500 x 3", lambda: llm_down(3)),
        (0.42, "GitLab latency 400 ms", lambda: slow(0.4)),
        (0.50, "3 x 429 Retry-After: 1", lambda: rate_limit(3)),
        (0.56, "502 on discussions", bad_gateway),
        (0.64, "GitLab latency back to 0", lambda: slow(0.0)),
        (0.72, "LLM 500 x 3", lambda: llm_down(3)),
        (0.78, "502 on discussions", bad_gateway),
        (0.84, "2 x 429 Retry-After: 1", lambda: rate_limit(2)),
    ]
    started = time.monotonic()
    for at, what, action in sorted(plan, key=lambda step: step[0]):
        await asyncio.sleep(max(0.0, started + at * seconds - time.monotonic()))
        action()
        run.trouble.append(what)
        say(f"trouble: {what}")


async def colleague(gitlab: FakeGitLab, mrs: list[OpenMR], seconds: float, run: LoadRun,
                    done: asyncio.Future[None], say: Callable[[str], None]) -> None:
    rng = random.Random(1729)  # the same conversation every run
    deadline = time.monotonic() + seconds
    turn = 0
    next_report = time.monotonic() + 30
    while time.monotonic() < deadline and not done.done():
        note = comment(gitlab, mrs[turn % len(mrs)], rng)
        run.asked.append(int(note["id"]))
        turn += 1
        if time.monotonic() >= next_report:
            next_report += 30
            say(f"{len(run.asked)} comments written, "
                f"{answered(gitlab, run.asked)} answered")
        await asyncio.sleep(PACE_SECONDS * rng.uniform(0.7, 1.3))


async def load(minutes: float, metrics_port: int, say: Callable[[str], None]) -> LoadRun:
    """Run the daemon against the sandbox for `minutes` of scripted conversation."""
    seconds = minutes * 60
    run = LoadRun()
    gitlab, mrs = sandbox()
    state = Path(tempfile.mkdtemp(prefix="livereview-preview-state-"))
    try:
        with FakeGitLabServer(gitlab) as server, FakeLLMServer() as llm:
            app = App.create(daemon_settings(server.url, llm.url, state, metrics_port))
            stop = asyncio.Event()
            daemon = asyncio.create_task(app.run(stop))
            run.start = time.time()
            trouble = asyncio.create_task(
                make_trouble(gitlab, server, llm.llm, seconds, run, say))
            try:
                async with asyncio.timeout(seconds + 90):
                    await colleague(gitlab, mrs, seconds, run, daemon, say)
                    trouble.cancel()
                    for _ in range(60):  # let the last questions be answered
                        if daemon.done() or answered(gitlab, run.asked) == len(run.asked):
                            break
                        await asyncio.sleep(0.5)
                    await asyncio.sleep(3 * SCRAPE_SECONDS)  # and scraped
            finally:
                trouble.cancel()
                run.end = time.time()
                run.answered = answered(gitlab, run.asked)
                stop.set()
                try:
                    async with asyncio.timeout(30):
                        await daemon
                except TimeoutError:
                    daemon.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await daemon
                finally:
                    await app.close()
    finally:
        shutil.rmtree(state, ignore_errors=True)
    return run


# ---------------------------------------------------------------------------------------
# Prometheus
# ---------------------------------------------------------------------------------------


class Prometheus:
    """Debian's prometheus on 127.0.0.1, scraping one target into a temporary TSDB."""

    def __init__(self, target: str, workdir: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        config = workdir / "prometheus.yml"
        config.write_text(
            "global:\n"
            f"  scrape_interval: {SCRAPE_SECONDS}s\n"
            f"  scrape_timeout: {SCRAPE_SECONDS}s\n"
            "scrape_configs:\n"
            "  - job_name: livereview\n"
            "    static_configs:\n"
            f"      - targets: [\"{target}\"]\n", encoding="utf-8")
        self._log: IO[bytes] = (workdir / "prometheus.log").open("wb")
        self.log_path = workdir / "prometheus.log"
        # Loopback only, whatever the environment's proxy settings say.
        self._http = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        self.process = subprocess.Popen(  # noqa: S603 - a fixed binary, our own arguments
            [PROMETHEUS, f"--config.file={config}",
             f"--storage.tsdb.path={workdir / 'tsdb'}",
             f"--web.listen-address={self.url.removeprefix('http://')}",
             "--log.level=warn"],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT)

    def get(self, path: str, **params: str) -> Any:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        with self._http.open(url, timeout=30) as response:
            body = json.loads(response.read())
        if body.get("status") != "success":
            raise RuntimeError(f"prometheus: {path}: {body}")
        return body["data"]

    def wait_ready(self, limit: float = 30.0) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited; see {self.log_path}:\n"
                                   + self.log_path.read_text(errors="replace")[-2000:])
            with contextlib.suppress(OSError), self._http.open(f"{self.url}/-/ready",
                                                               timeout=2) as response:
                if response.status == 200:
                    return
            time.sleep(0.2)
        raise RuntimeError(f"prometheus not ready after {limit:g}s")

    def version(self) -> str:
        return str(self.get("/api/v1/status/buildinfo")["version"])

    def query_range(self, expr: str, start: float, end: float, step: float
                    ) -> list[dict[str, Any]]:
        data = self.get("/api/v1/query_range", query=expr, start=f"{start:.3f}",
                        end=f"{end:.3f}", step=f"{step:g}")
        return list(data["result"])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self._log.close()


# ---------------------------------------------------------------------------------------
# The dashboard's queries
# ---------------------------------------------------------------------------------------


@dataclass
class Series:
    label: str
    times: list[float]
    values: list[float]

    @property
    def last(self) -> float:
        return next((v for v in reversed(self.values) if not math.isnan(v)), math.nan)

    @property
    def max(self) -> float:
        finite = [v for v in self.values if not math.isnan(v)]
        return max(finite) if finite else math.nan


def promql(expr: str, window: str | None) -> str:
    """The dashboard's expression as Grafana would send it with "All" host types selected."""
    expr = expr.replace("${host_type}", ".*").replace("$host_type", ".*")
    if window:
        expr = re.sub(r"\[5m\]", f"[{window}]", expr)
    return expr


def legend(fmt: str, labels: dict[str, str]) -> str:
    if not fmt:
        return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
    return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: labels.get(m.group(1), ""), fmt)


def evaluate(prometheus: Prometheus, panel: dict[str, Any], start: float, end: float,
             window: str | None) -> list[Series]:
    out: list[Series] = []
    for target in panel.get("targets", []):
        found = prometheus.query_range(promql(str(target["expr"]), window), start, end,
                                       STEP_SECONDS)
        batch = []
        for result in found:
            labels = {k: v for k, v in result["metric"].items() if k != "__name__"}
            points = result["values"]
            batch.append(Series(legend(str(target.get("legendFormat", "")), labels),
                                [float(t) for t, _ in points], [float(v) for _, v in points]))
        out.extend(sorted(batch, key=lambda s: s.label))
    return out


# ---------------------------------------------------------------------------------------
# Drawing: Grafana's grid (24 columns, 30 px rows, 8 px gaps), dark theme
# ---------------------------------------------------------------------------------------

WIDTH = 1600
CELL_H, GAP = 30, 8
HEADER_H, CAPTION_H = 46, 40
BACKGROUND, PANEL, BORDER = "#111217", "#181b1f", "#2b2e33"
TEXT, MUTED, GRID = "#ccccdc", "#8e8e9c", "#2a2d33"
PALETTE = ("#7EB26D", "#EAB839", "#6ED0E0", "#EF843C", "#E24D42", "#1F78C1", "#BA43A9",
           "#705DA0", "#508642", "#CCA300")  # Grafana's palette-classic
NAMED = {"green": "#73BF69", "yellow": "#FADE2A", "red": "#F2495C", "orange": "#FF9830",
         "blue": "#5794F2"}
FONT = "DejaVu Sans"


def decimals_for(value: float) -> int:
    if value == 0 or math.isnan(value):
        return 0
    return max(0, min(3, 2 - math.floor(math.log10(abs(value)))))


def number(value: float, decimals: int | None = None) -> str:
    places = decimals_for(value) if decimals is None else decimals
    text = f"{value:.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text and decimals is None else text


def unit_text(value: float, unit: str, decimals: int | None = None) -> str:
    """Grafana's value formats for the units the dashboard uses."""
    if math.isnan(value):
        return "No data"
    if unit == "s":
        size = abs(value)
        if size == 0:
            return "0 s"
        if size < 1:
            return f"{number(value * 1000, None if decimals is None else max(0, decimals - 3))} ms"
        if size < 60:
            return f"{number(value, decimals)} s"
        return f"{number(value / 60, decimals)} min"
    suffix = {"ops": " ops/s", "reqps": " req/s"}.get(unit, "")
    for scale, letter in ((1e6, " Mil"), (1e3, " K")):
        if abs(value) >= scale:
            return f"{number(value / scale)}{letter}{suffix}"
    return f"{number(value, decimals)}{suffix}"


def threshold_color(panel: dict[str, Any], value: float) -> str:
    steps = panel["fieldConfig"]["defaults"].get("thresholds", {}).get("steps", [])
    color = "green"
    for step in steps:
        if step.get("value") is None or (not math.isnan(value) and value >= step["value"]):
            color = step["color"]
    return NAMED.get(color, color)


class Canvas:
    """Pixel coordinates (origin top-left) on a matplotlib figure."""

    def __init__(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.figure = Figure(figsize=(width / 100, height / 100), dpi=100,
                             facecolor=BACKGROUND)

    def box(self, x: float, y: float, w: float, h: float) -> list[float]:
        return [x / self.width, 1 - (y + h) / self.height, w / self.width, h / self.height]

    def axes(self, x: float, y: float, w: float, h: float) -> Axes:
        left, bottom, width, height = self.box(x, y, w, h)
        return self.figure.add_axes((left, bottom, width, height))

    def text(self, x: float, y: float, text: str, *, size: float = 9, color: str = TEXT,
             weight: str = "normal", ha: str = "left", va: str = "top") -> None:
        self.figure.text(x / self.width, 1 - y / self.height, text, fontsize=size,
                         color=color, fontweight=weight, ha=ha, va=va, family=FONT)

    def rect(self, x: float, y: float, w: float, h: float, *, color: str,
             edge: str | None = None, radius: float = 3) -> None:
        left, bottom, width, height = self.box(x, y, w, h)
        self.figure.patches.append(FancyBboxPatch(
            (left, bottom), width, height, transform=self.figure.transFigure,
            boxstyle=f"round,pad=0,rounding_size={radius / self.width}",
            facecolor=color, edgecolor=edge or color, linewidth=1, zorder=-1))


def panel_box(grid: dict[str, int]) -> tuple[float, float, float, float]:
    column = (WIDTH - GAP) / 24
    x = GAP + grid["x"] * column
    y = HEADER_H + grid["y"] * (CELL_H + GAP)
    return x, y, grid["w"] * column - GAP, grid["h"] * CELL_H + (grid["h"] - 1) * GAP


def draw_stat(canvas: Canvas, panel: dict[str, Any], series: list[Series],
              box: tuple[float, float, float, float]) -> None:
    x, y, w, h = box
    unit = panel["fieldConfig"]["defaults"].get("unit", "short")
    top = y + 30
    if not series:
        canvas.text(x + w / 2, top + (h - 30) / 2, "No data", size=14, color=MUTED,
                    ha="center", va="center")
        return
    tile_w = (w - 12 - 6 * (len(series) - 1)) / len(series)
    for i, s in enumerate(series):
        tx, tw, th = x + 6 + i * (tile_w + 6), tile_w, h - 36
        canvas.rect(tx, top, tw, th, color=threshold_color(panel, s.last), radius=2)
        canvas.text(tx + tw / 2, top + 6, s.label, size=10, color="#ffffff", ha="center")
        canvas.text(tx + tw / 2, top + th * 0.52, unit_text(s.last, unit), size=26,
                    color="#ffffff", weight="bold", ha="center", va="center")
        if panel.get("options", {}).get("graphMode") == "area" and len(s.values) > 1:
            spark = canvas.axes(tx, top + th * 0.68, tw, th * 0.32)
            spark.set_axis_off()
            values = [0.0 if math.isnan(v) else v for v in s.values]
            spark.fill_between(s.times, values, color="#ffffff", alpha=0.18, linewidth=0)
            spark.plot(s.times, values, color="#ffffff", alpha=0.45, linewidth=1)
            spark.set_xlim(s.times[0], s.times[-1])
            top_value = max(values) or 1.0
            spark.set_ylim(0, top_value * 1.15)


def draw_timeseries(canvas: Canvas, panel: dict[str, Any], series: list[Series],
                    box: tuple[float, float, float, float], span: tuple[float, float]) -> None:
    x, y, w, h = box
    unit = panel["fieldConfig"]["defaults"].get("unit", "short")
    row = 16
    legend_h = row * (len(series) + 1) + 6 if series else 0
    plot_x, plot_y = x + 62, y + 34
    plot_w, plot_h = w - 62 - 14, h - 34 - 22 - legend_h
    ax = canvas.axes(plot_x, plot_y, plot_w, plot_h)
    ax.set_facecolor(PANEL)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.grid(True, color=GRID, linewidth=1)
    ax.tick_params(colors=MUTED, labelsize=7.5, length=0, pad=4)
    ax.set_xlim(span[0], span[1])
    every = next(n for n in (15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200)
                 if (span[1] - span[0]) / n <= 6)
    ax.xaxis.set_major_locator(FixedLocator(
        list(range(math.ceil(span[0] / every) * every, int(span[1]) + 1, every))))
    clock = "%H:%M:%S" if every < 60 else "%H:%M"
    ax.xaxis.set_major_formatter(FuncFormatter(
        lambda t, _pos: datetime.fromtimestamp(t, UTC).astimezone().strftime(clock)))
    finite = [v for s in series for v in s.values if not math.isnan(v)]
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        ax.plot(s.times, s.values, color=color, linewidth=1.2)
        ax.fill_between(s.times, s.values, color=color, alpha=0.10, linewidth=0)
    low = min([0.0, *finite])
    high = max(finite) if finite else 0.0
    ax.set_ylim(low, high * 1.1 if high > low else low + 1)
    ax.yaxis.set_major_locator(MaxNLocator(nbins=4, min_n_ticks=3))
    ticks = [t for t in ax.get_yticks() if low <= t <= ax.get_ylim()[1]]
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    places = next((p for p in range(5) if abs(step * 10**p - round(step * 10**p)) < 1e-6), 4)
    ax.yaxis.set_major_formatter(FuncFormatter(
        lambda v, _pos: unit_text(v, unit, places if v else 0)))
    if not finite:
        ax.text(0.5, 0.5, "No data", transform=ax.transAxes, color=MUTED, fontsize=12,
                ha="center", va="center")
    # The legend table: name, "Last *" (last not null) and "Max", as the panel asks.
    top = y + h - legend_h
    value_cols = (x + w - 110, x + w - 14)
    canvas.text(value_cols[0], top, "Last *", size=7.5, color="#6e9fff", ha="right")
    canvas.text(value_cols[1], top, "Max", size=7.5, color="#6e9fff", ha="right")
    for i, s in enumerate(series):
        ry = top + row * (i + 1)
        canvas.rect(x + 12, ry + 5, 14, 3, color=PALETTE[i % len(PALETTE)], radius=1)
        canvas.text(x + 32, ry, s.label, size=7.5)
        canvas.text(value_cols[0], ry, unit_text(s.last, unit), size=7.5, ha="right")
        canvas.text(value_cols[1], ry, unit_text(s.max, unit), size=7.5, ha="right")


def render(dashboard: dict[str, Any], results: dict[int, list[Series]],
           span: tuple[float, float], caption: list[str], out: Path) -> None:
    panels = dashboard["panels"]
    bottom = max(panel_box(p["gridPos"])[1] + panel_box(p["gridPos"])[3] for p in panels)
    canvas = Canvas(WIDTH, int(bottom + GAP + CAPTION_H))
    # A header like Grafana's: the title, the variables, the time range.
    canvas.text(GAP + 4, 14, dashboard.get("title", "dashboard"), size=13, weight="bold")
    chips = (("Data source", "Prometheus"), ("Host type", "All"))
    cx = GAP + 130
    for name, value in chips:
        canvas.rect(cx, 9, 86, 24, color="#22252b", edge=BORDER)
        canvas.text(cx + 43, 21, name, size=8, color=MUTED, ha="center", va="center")
        canvas.rect(cx + 86, 9, 96, 24, color=PANEL, edge=BORDER)
        canvas.text(cx + 134, 21, value, size=8, ha="center", va="center")
        cx += 196
    minutes = round((span[1] - span[0]) / 60)
    canvas.rect(WIDTH - GAP - 170, 9, 170, 24, color=PANEL, edge=BORDER)
    canvas.text(WIDTH - GAP - 85, 21, f"Last {minutes} minute{'s' * (minutes != 1)}", size=8,
                ha="center", va="center")
    for panel in panels:
        box = panel_box(panel["gridPos"])
        x, y, w, h = box
        canvas.rect(x, y, w, h, color=PANEL, edge=BORDER)
        canvas.text(x + 10, y + 9, panel["title"], size=9.5, weight="bold")
        series = results.get(int(panel["id"]), [])
        if panel["type"] == "stat":
            draw_stat(canvas, panel, series, box)
        else:
            draw_timeseries(canvas, panel, series, box, span)
    for i, line in enumerate(caption):
        canvas.text(WIDTH / 2, bottom + GAP + 6 + i * 16, line, size=8.5,
                    color=MUTED if i else TEXT, ha="center")
    out.parent.mkdir(parents=True, exist_ok=True)
    canvas.figure.savefig(out, dpi=100, facecolor=BACKGROUND)


# ---------------------------------------------------------------------------------------


def rel(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(ROOT))
    return str(path)


@contextlib.contextmanager
def prometheus_for(target: str) -> Iterator[Prometheus]:
    with tempfile.TemporaryDirectory(prefix="livereview-preview-prom-") as workdir:
        prometheus = Prometheus(target, Path(workdir))
        try:
            prometheus.wait_ready()
            yield prometheus
        finally:
            prometheus.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=4.0,
                        help="length of the scripted conversation (default 4)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"where the PNG goes (default {rel(DEFAULT_OUT)})")
    args = parser.parse_args(argv)
    if not Path(PROMETHEUS).exists():
        print(f"render_preview.py needs Debian's prometheus package ({PROMETHEUS})",
              file=sys.stderr)
        return 2
    dashboard: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    began = time.monotonic()

    def say(text: str) -> None:
        print(f"[{time.monotonic() - began:6.1f}s] {text}", flush=True)

    logs.configure("console", level="ERROR")  # the daemon's own warnings are expected here
    metrics_port = free_port()
    window = "1m" if args.minutes < 10 else None
    with prometheus_for(f"127.0.0.1:{metrics_port}") as prometheus:
        version = prometheus.version()
        say(f"prometheus {version} on {prometheus.url}, scraping 127.0.0.1:{metrics_port} "
            f"every {SCRAPE_SECONDS}s; {args.minutes:g} minutes of conversation")
        run = asyncio.run(load(args.minutes, metrics_port, say))
        say(f"load done: {len(run.asked)} comments, {run.answered} answered")
        results = {int(p["id"]): evaluate(prometheus, p, run.start, run.end, window)
                   for p in dashboard["panels"]}
    for panel in dashboard["panels"]:
        found = results[int(panel["id"])]
        finite = sum(1 for s in found if not math.isnan(s.last))
        say(f"panel {panel['id']:>2} {panel['title']!r}: {len(found)} series, "
            f"{finite} with values")
    minutes = (run.end - run.start) / 60
    caption = [
        f"Rendered from {rel(DASHBOARD)}: each panel's query evaluated by Prometheus {version} "
        f"over a {minutes:.0f}-minute run of livereview against its sandbox GitLab "
        "(not a Grafana screenshot)",
        f"Scraped every {SCRAPE_SECONDS} s, query_range step {STEP_SECONDS} s, $host_type = All"
        + (f"; rate windows [5m] shortened to [{window}] for the short run" if window else "")
        + f". {len(run.asked)} comments on {len(SAMPLES)} MRs with injected 429s, 502s, "
        "LLM 500s and a slow spell.",
    ]
    render(dashboard, results, (run.start, run.end), caption, args.out)
    say(f"wrote {rel(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
