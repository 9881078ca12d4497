"""Figure 7 (informational): what one hot 1 000-note MR costs the poll cycle.

An MR with recent human activity is re-fetched on every hot cycle (3 s). With 1 000
comments (250 threads × 4) the pure diff is well under a millisecond (figure 3); this
measures the whole path of the real poller against the fake at 50 ms per request: the
fetch (paginated discussions), loading the stored snapshot, the diff, and — when a note
was added — re-writing the stored conversation. Wall time and process CPU time (the
daemon's event loop plus its store thread; the fake's HTTP threads are in this process
too, so CPU is an upper bound).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

from common import LATENCY, BenchGitLab, NoLLM, Row, poll_cycle, repo_path, settings

from livereview.app.daemon import App
from livereview.sandbox.gitlab.server import FakeGitLabServer


async def measure(state_dir: Path, notes: int, repeat: int) -> dict[str, tuple[float, float]]:
    gitlab = BenchGitLab()
    path = repo_path(0)
    gitlab.add_project(path)
    iid = gitlab.add_mr(path, title="big", author="alice", files={"a.py": ("x\n", "y\n")})
    thread = ""
    for n in range(notes):
        note = gitlab.add_note(path, iid, author=("bob", "carol")[n % 2],
                               body=f"Comment {n}: please rename `x`, and check the error path.",
                               reply_to_discussion=thread if n % 4 else None)
        if n % 4 == 0:
            thread = next(str(d["id"]) for d in gitlab.discussions(path, iid)
                          if d["notes"][0]["id"] == note["id"])
    out: dict[str, list[tuple[float, float]]] = {"first": [], "unchanged": [], "added": []}
    with FakeGitLabServer(gitlab, latency_seconds=LATENCY) as server:
        app = App.create(settings(server.url, [path], state_dir / "bigmr.db"),
                         answerer=NoLLM())
        try:
            for i in range(1 + 2 * repeat):
                kind = "first" if i == 0 else ("unchanged" if i % 2 else "added")
                if kind == "added":
                    gitlab.add_note(path, iid, author="bob", body=f"one more ({i})",
                                    reply_to_discussion=thread)
                wall, cpu = time.perf_counter(), time.process_time()
                reports = await poll_cycle(app, cold=i == 0)
                out[kind].append((time.perf_counter() - wall, time.process_time() - cpu))
                assert next(iter(reports.values())).fetched == 1
        finally:
            await app.close()
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
            for k, v in out.items()}


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    notes, repeat = 1000, (1 if quick else 5)
    print(f"\n## 7. one hot MR with {notes} comments, per poll cycle "
          f"({LATENCY * 1000:.0f} ms per request, median of {repeat})")
    r = asyncio.run(measure(state_dir, notes, repeat))
    for kind, (wall, cpu) in r.items():
        print(f"{kind:>9}: {wall * 1000:7.0f} ms wall, {cpu * 1000:7.0f} ms CPU")
    (uw, uc), (aw, ac) = r["unchanged"], r["added"]
    return [Row(f"7. hot {notes}-comment MR, per cycle: unchanged / 1 note added",
                f"{uw * 1000:.0f} / {aw * 1000:.0f} ms wall, {uc * 1000:.0f} / "
                f"{ac * 1000:.0f} ms CPU")]
