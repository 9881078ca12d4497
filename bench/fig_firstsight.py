"""Figure 16: first sight of a big GitLab, at 50 ms per request (docs/DESIGN.md §11).

The fake holds REPOS × 50 open MRs. Most have been idle for three days — before the
baseline (`backfill_hours`, default 24) — and 2 % were active an hour ago, so they may hold
a mention the daemon must answer. The daemon runs in a subprocess (firstsight_driver.py):

- the first sweep: one cold cycle that waits for every MR it reads; its time, requests,
  and CPU (per MR read: the CPU of a sweep in which every MR is active, at 0 ms, divided
  by the MRs read);
- a mention made just before the daemon starts, on an MR idle for days: the seconds from
  the start of the process to the bot's 👀 (the fake's award timestamp); then SIGTERM in
  the middle of that sweep, and the seconds until the process has exited.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import BOT, FILES, HUMANS, LATENCY, Clock, Row, repo_path
from fig_memory import FrozenGitLab

from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.llm_server import FakeLLMServer

DRIVER = Path(__file__).with_name("firstsight_driver.py")
PER_REPO = 50
ACTIVE_EVERY = 50  # one MR in 50 (2 %) was active within the backfill window


def _fake(repos: int, *, all_active: bool = False) -> tuple[FrozenGitLab, list[tuple[str, int]]]:
    clock = Clock()
    gitlab = FrozenGitLab(clock=clock)
    mrs: list[tuple[str, int]] = []
    for r in range(repos):
        path = repo_path(r)
        gitlab.add_project(path)
        for m in range(PER_REPO):
            active = all_active or (r * PER_REPO + m) % ACTIVE_EVERY == 0
            clock.rewind(timedelta(hours=1) if active else timedelta(days=3))
            iid = gitlab.add_mr(path, title=f"change {r}.{m}", author=HUMANS[m % 4],
                                files=FILES)
            gitlab.add_note(path, iid, author=HUMANS[(m + 1) % 4], body="looks fine")
            mrs.append((path, iid))
    clock.reset()
    return gitlab, mrs


def _driver(url: str, repos: int, db: Path, mode: str, *extra: str
            ) -> subprocess.Popen[str]:
    return subprocess.Popen(  # noqa: S603 - our own interpreter and script
        [sys.executable, str(DRIVER), url, str(repos), str(db), mode, *extra],
        stdout=subprocess.PIPE, text=True)


def _sweep(state_dir: Path, repos: int, *, all_active: bool, latency: float
           ) -> dict[str, Any]:
    gitlab, _ = _fake(repos, all_active=all_active)
    db = state_dir / f"firstsight-{repos}-{all_active}-{latency}.db"
    with FakeGitLabServer(gitlab, latency_seconds=latency) as server:
        proc = _driver(server.url, repos, db, "sweep")
        out, _ = proc.communicate()
    return dict(json.loads(out.splitlines()[-1]))


def _ack_and_stop(state_dir: Path, repos: int) -> tuple[float, float]:
    """Seconds from the daemon's start to 👀 on a mention made just before it; seconds
    from SIGTERM (sent then, mid-sweep) to its exit."""
    gitlab, mrs = _fake(repos)
    path, iid = mrs[len(mrs) // 2 + 1]  # idle for days until this mention
    note = gitlab.add_note(path, iid, author="alice", body=f"@{BOT} is this safe?")
    db = state_dir / f"firstsight-run-{repos}.db"
    with FakeGitLabServer(gitlab, latency_seconds=LATENCY) as server, \
            FakeLLMServer() as llm:
        started = datetime.now(UTC)
        proc = _driver(server.url, repos, db, "run", llm.url)
        award = None
        while award is None and proc.poll() is None:
            award = next(iter(gitlab.awards_on(path, iid, note["id"])), None)
            time.sleep(0.02)
        stopping = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=120)
        stopped = time.monotonic() - stopping
    if award is None:
        return float("nan"), stopped
    acked = datetime.fromisoformat(str(award["created_at"]).replace("Z", "+00:00"))
    return (acked - started).total_seconds(), stopped


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    sizes = (8,) if quick else (8, 200)
    rows: list[Row] = []
    print(f"\n## 16. first sight at {LATENCY * 1000:.0f} ms per request: {PER_REPO} open MRs "
          f"per repo, {100 // ACTIVE_EVERY} % active within the backfill window")
    for repos in sizes:
        mrs = repos * PER_REPO
        s = _sweep(state_dir, repos, all_active=False, latency=LATENCY)
        target = 5.0 if mrs <= 400 else 60.0
        print(f"  {mrs:>6} MRs: first sweep {s['seconds']:6.1f} s, {s['requests']:>6} requests, "
              f"listed {s['listed']}, read {s['fetched']}, CPU {s['cpu_seconds']:.2f} s")
        rows.append(Row(f"16. first sweep, {mrs} MRs", f"{s['seconds']:.1f} s, "
                        f"{s['requests']} requests, {s['fetched']} read",
                        f"≤ {target:g} s", s["seconds"] <= target))
    busy = _sweep(state_dir, sizes[0], all_active=True, latency=0.0)
    per_mr = busy["cpu_seconds"] / max(1, busy["fetched"]) * 1000
    print(f"  every MR active, 0 ms: {busy['fetched']} read, CPU {busy['cpu_seconds']:.2f} s "
          f"({per_mr:.2f} ms per MR read)")
    rows.append(Row(f"16. CPU per MR read ({busy['fetched']} MRs)", f"{per_mr:.2f} ms",
                    "≤ 2 ms", per_mr <= 2.0))
    ack, stop = _ack_and_stop(state_dir, sizes[-1])
    mrs = sizes[-1] * PER_REPO
    print(f"  {mrs} MRs: 👀 {ack:.1f} s after the daemon's start (a mention on an MR idle "
          f"for days, made just before); SIGTERM then: exited in {stop:.1f} s")
    rows.append(Row(f"16. 👀 after start, {mrs} MRs", f"{ack:.1f} s", "≤ 5 s", ack <= 5.0))
    rows.append(Row(f"16. SIGTERM mid-sweep, {mrs} MRs", f"exited in {stop:.1f} s",
                    "≤ 30 s (shutdown_grace_seconds)", stop <= 30.0))
    return rows


if __name__ == "__main__":
    import tempfile

    from common import quiet

    quiet()
    with tempfile.TemporaryDirectory() as tmp:
        for row in run(Path(tmp), quick="--quick" in sys.argv):
            print(f"{row.figure} | {row.measured} | {row.target} | {row.verdict}")
