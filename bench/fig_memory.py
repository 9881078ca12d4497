"""Figure 5: the daemon's peak memory with 200 repos × 50 open MRs stored and answers
flowing (issue 26: ≤ 100 MB).

The fake GitLab (10 000 MRs, one comment each, last touched an hour ago; one MR in 100 with
a mention to answer, and after every cycle a few more mentions) and the stand-in model are
served from this process; the daemon runs in a subprocess (memory_driver.py: what
`livereview run` imports, its own model client, each cycle followed by the reply worker's
drain) so that its resident memory is its own: its VmHWM from /proc, cross-checked with
getrusage(RUSAGE_CHILDREN).

The first cycle sees every MR for the first time and fetches all of them (3 requests
each). At 50 ms per request and the default 4 requests in flight per host that alone is
30 000 × 50 ms / 4 ≈ 6 min, too long for this suite: the fake answers without added
latency here, and the 50 ms figure is extrapolated from the request count. Without
latency the fetches outrun the daemon's single store thread, so more fetched snapshots
wait in memory at once than they would at 50 ms: the peak measured here is the worst
case (a GitLab on the same LAN).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from common import LATENCY, BenchGitLab, Clock, Row, populate, record

from livereview.sandbox.gitlab.model import JSON, MergeRequest
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.llm_server import FakeLLMServer

DRIVER = Path(__file__).with_name("memory_driver.py")


class FrozenGitLab(BenchGitLab):
    """The fake GitLab for a benchmark in which nothing changes once it is populated.

    The stock fake builds the JSON of every matching MR for each page of a listing and
    then slices out the page (O(MRs) per page, O(MRs²) per listing: ~40 s of CPU, holding
    the fake's lock, for 100 pages of 10 000 MRs). Nothing changes here, so each MR's
    listing row is built once — again only for an MR that got a note since."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._rows: dict[int, JSON] = {}

    def add_note(self, project: str, iid: int, **kwargs: Any) -> JSON:
        note = super().add_note(project, iid, **kwargs)
        self._rows.pop(self.find_mr(project, iid).id, None)
        return note

    def mr_json(self, mr: MergeRequest, *, full: bool = False) -> JSON:
        if full:
            return super().mr_json(mr, full=True)
        if mr.id not in self._rows:
            self._rows[mr.id] = super().mr_json(mr)
        return self._rows[mr.id]

CONCURRENCY = 4  # hosts[].max_concurrent_requests default
MENTION_EVERY = 100  # one MR in 100 holds a mention at first sight
MENTIONS_PER_CYCLE = 5  # and this many more arrive after each cycle
TARGET_MB = 100.0  # issue 26: peak RSS with 10 000 MRs stored and answers flowing


@dataclass
class Measured:
    lines: list[dict[str, Any]]  # what the driver printed: start-up, then each cycle
    returncode: int
    fake_cpu: float  # seconds of CPU this process spent serving the fake
    children_peak_mib: float  # getrusage(RUSAGE_CHILDREN).ru_maxrss

    @property
    def cycles(self) -> list[dict[str, Any]]:
        return [d for d in self.lines if d["stage"] == "cycle"]

    @property
    def peak_mib(self) -> float:
        return max(int(d["VmHWM"]) for d in self.lines) / 1024


def measure(state_dir: Path, repos: int, per_repo: int, cycles: int,
            latency: float = 0.0) -> Measured:
    """Serve `repos` × `per_repo` idle MRs and run the daemon's driver against them."""
    clock = Clock()
    clock.rewind(timedelta(hours=1))
    gitlab = FrozenGitLab(clock=clock)
    started = time.perf_counter()
    mrs = populate(gitlab, repos, per_repo)
    for repo, iid in mrs[::MENTION_EVERY]:
        gitlab.add_note(repo, iid, author="alice", body="@livereview why this way?")
    clock.reset()
    print(f"fake populated in {time.perf_counter() - started:.1f} s")
    lines: list[dict[str, Any]] = []
    db = state_dir / f"memory-{repos}-{per_repo}-{latency}.db"
    # No database yet: the daemon's first start creates and upgrades it, in a child process
    # (store/migrate_apart.py) that keeps alembic out of the measured one, whose peak RSS
    # getrusage's children maximum includes as well (the child's is far lower).
    db.unlink(missing_ok=True)
    with FakeGitLabServer(gitlab, latency_seconds=latency) as server, FakeLLMServer() as llm:
        cpu_before = time.process_time()
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and script
            [sys.executable, str(DRIVER), server.url, str(repos), str(db), str(cycles),
             llm.url], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:
            data = json.loads(line)
            lines.append(data)
            if data["stage"] == "cycle":
                print(f"  cycle {data['cycle']:>2}: {data['seconds']:6.2f} s "
                      f"(daemon CPU {data['cpu_seconds']:5.2f} s), listed {data['listed']:>5}, "
                      f"fetched {data['fetched']:>5}, {data['requests']:>5} requests, "
                      f"{data['jobs']:>3} answers asked for, "
                      f"RSS {data['VmRSS'] / 1024:6.1f} MiB, peak {data['VmHWM'] / 1024:6.1f} MiB")
                step = max(1, len(mrs) // MENTIONS_PER_CYCLE)
                for repo, iid in mrs[data["cycle"] % step::step][:MENTIONS_PER_CYCLE]:
                    gitlab.add_note(repo, iid, author="bob", body="@livereview and now?")
            else:
                print(f"  {data['stage']:>8}: RSS {data['VmRSS'] / 1024:6.1f} MiB")
        proc.wait()
        fake_cpu = time.process_time() - cpu_before
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB → MiB
    return Measured(lines, proc.returncode, fake_cpu, children_peak)


def run(state_dir: Path, *, quick: bool, target_mb: float = TARGET_MB) -> list[Row]:
    """Peak RSS at a smaller size first (a point of the RSS-against-MRs plot), then the
    figure's own size — 10 000 MRs, quick or not (quick runs fewer cycles) — in full."""
    rows: list[Row] = []
    for repos in (10, 200):
        rows = _one_size(state_dir, repos, target_mb, rows, cycles=4 if quick else 10)
    return rows


def _one_size(state_dir: Path, repos: int, target_mib: float, before: list[Row], *,
              cycles: int) -> list[Row]:
    per_repo = 50
    mrs = repos * per_repo
    print(f"\n## 5. peak RSS: {repos} repos × {per_repo} open MRs = {mrs} MRs, "
          f"{cycles} poll cycles, daemon in a subprocess (fake without added latency)")
    m = measure(state_dir, repos, per_repo, cycles)
    if m.returncode != 0 or not m.cycles:
        return [*before, Row("5. peak RSS", f"driver failed (exit {m.returncode})",
                             f"< {target_mib:g} MB", False)]
    first = m.cycles[0]
    after_import = m.lines[0]["VmRSS"] / 1024
    requests = first["requests"]
    at_latency = requests * LATENCY / CONCURRENCY
    idle_cpu = sum(c["cpu_seconds"] for c in m.cycles[1:]) / max(1, len(m.cycles) - 1)
    asked = sum(c["jobs"] for c in m.cycles)
    print("the daemon as `pip install livereview` installs it: without trio, which this "
          "development environment holds for selenium (bench/memory_driver.py)")
    print(f"peak RSS {m.peak_mib:.1f} MiB (VmHWM; getrusage children max "
          f"{m.children_peak_mib:.1f} MiB), {after_import:.1f} MiB after imports; the fake "
          f"GitLab used {m.fake_cpu:.1f} s CPU serving it")
    print(f"first cycle: {first['seconds']:.1f} s, {first['cpu_seconds']:.1f} s CPU for "
          f"{first['fetched']} MRs ({first['cpu_seconds'] / max(1, first['fetched']) * 1000:.1f}"
          f" ms per MR, {requests} requests); at {LATENCY * 1000:.0f} ms/request and "
          f"{CONCURRENCY} in flight at least {at_latency:.0f} s ({at_latency / 60:.1f} min); "
          f"idle cycles after it: {idle_cpu * 1000:.0f} ms CPU each")
    record("rss", "GitLab, 50 MRs a repo (fig. 5)", [(mrs, m.peak_mib)])
    return [
        *before,
        Row(f"5. peak RSS, {mrs} MRs stored, {cycles} cycles, answers flowing",
            f"{m.peak_mib * 2**20 / 1e6:.0f} MB = {m.peak_mib:.0f} MiB ({after_import:.0f} "
            f"MiB of it after imports; {asked} answers asked for; without trio, as pip "
            "installs it)",
            f"≤ {target_mib:g} MB", m.peak_mib * 2**20 <= target_mib * 10**6 and asked > 0),
        Row(f"5. first cycle (first sight of {mrs} MRs)",
            f"{first['seconds']:.0f} s at 0 ms; ≥ {at_latency:.0f} s at "
            f"{LATENCY * 1000:.0f} ms ({requests} requests)"),
        Row(f"5. later cycle with {mrs} MRs stored (answers included)",
            f"{idle_cpu * 1000:.0f} ms CPU"),
    ]
