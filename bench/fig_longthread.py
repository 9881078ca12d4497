"""Figure 8: one thread of 1 000, 10 000 and 100 000 notes — what it costs the daemon, and
whether a mention on another MR waits for it.

The fake GitLab serves, in repo-000, an MR whose single discussion holds N notes (the bot
takes part, every 500th note mentions it) and, in repo-001, a small MR. The daemon runs in
a subprocess (bench/longthread_driver.py), so its peak RSS (VmHWM) and CPU time are its own:

- first cycle: the first sight of the long MR (fetch, parse, diff, triggers, store), then a
  second, unchanged cycle;
- time to 👀 on the small MR: the real daemon (`app.run()`, hot interval 1 s) is started;
  once it has read both MRs' discussions (the small one is synced, the long one is being
  processed) a human mentions the bot on the small MR; the fake's own timestamps give
  note → award. The same with a 100-note thread is the baseline.

The long discussion's JSON is built once by the fake (it never changes here): the stock
fake rebuilds and re-encodes every note on each request, seconds of the bench process's
CPU that would be counted as the daemon's wait.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import BOT, BenchGitLab, Row, parse_time, quiet, repo_path

from livereview.sandbox.gitlab_server import FakeGitLabServer
from livereview.sandbox.loopback import Response

DRIVER = Path(__file__).with_name("longthread_driver.py")
SIZES = (1_000, 10_000, 100_000)


class FrozenLongThread(FakeGitLabServer):
    """Serves the long MR's discussions from a cache (the MR never changes in this figure)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cache: dict[str, Response] = {}
        self.long_fetched = self.small_fetched = False

    def dispatch(self, method: str, path: str, query: dict[str, str], raw: bytes,
                 headers: Any) -> Response:
        if method != "GET" or not path.endswith("/merge_requests/1/discussions"):
            return super().dispatch(method, path, query, raw, headers)
        if "repo-001" in path:
            self.small_fetched = True
            return super().dispatch(method, path, query, raw, headers)
        self.long_fetched = True
        key = json.dumps(sorted(query.items()))
        if key not in self._cache:
            self._cache[key] = super().dispatch(method, path, query, raw, headers)
        return self._cache[key]


def populate(notes: int) -> tuple[BenchGitLab, int]:
    gitlab = BenchGitLab()
    for user in ("alice", "bob", "carol"):
        gitlab.add_user(user)
    long_repo, small_repo = repo_path(0), repo_path(1)
    gitlab.add_project(long_repo)
    gitlab.add_project(small_repo)
    iid = gitlab.add_mr(long_repo, title="long", author="alice", files={"a.py": ("x\n", "y\n")})
    gitlab.add_mr(small_repo, title="small", author="alice", files={"b.py": ("x\n", "y\n")})
    gitlab.add_note(long_repo, iid, author="bob", body="@livereview start", thread=True)
    discussion = str(gitlab.discussions(long_repo, iid)[0]["id"])
    for n in range(1, notes):
        author = (BOT, "bob", "carol")[n % 3]
        mention = "@livereview " if n % 500 == 0 and author != BOT else ""
        gitlab.add_note(long_repo, iid, author=author, reply_to_discussion=discussion,
                        body=f"{mention}Comment {n}: please rename `x`, and check the error path.")
    return gitlab, iid


def first_cycles(state_dir: Path, notes: int) -> list[dict[str, Any]]:
    gitlab, _ = populate(notes)
    with FrozenLongThread(gitlab) as server:
        proc = subprocess.run(  # noqa: S603 - our own interpreter and script
            [sys.executable, str(DRIVER), "cycles", server.url,
             str(state_dir / f"long-{notes}.db"), "2"],
            capture_output=True, text=True, check=False, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed")
    return [json.loads(line) for line in proc.stdout.splitlines()]


def ack_while_processing(state_dir: Path, notes: int) -> float | None:
    """Seconds from a mention on the small MR to its 👀, while the long one is processed."""
    gitlab, _ = populate(notes)
    with FrozenLongThread(gitlab) as server:
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and script
            [sys.executable, str(DRIVER), "daemon", server.url,
             str(state_dir / f"ack-{notes}.db")], stdout=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while not (server.long_fetched and server.small_fetched) \
                    and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.3)  # the small MR's first sync is stored; the long one is not
            note = gitlab.add_note(repo_path(1), 1, author="alice", body="@livereview why?")
            while time.monotonic() < deadline:
                awards = gitlab.awards_on(repo_path(1), 1, note["id"])
                if awards:
                    return (parse_time(awards[0]["created_at"])
                            - parse_time(note["created_at"])).total_seconds()
                time.sleep(0.02)
            return None
        finally:
            proc.terminate()
            proc.wait(timeout=60)


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    sizes = SIZES[:2] if quick else SIZES
    print(f"\n## 8. one thread of {', '.join(f'{n:,}' for n in sizes)} notes "
          "(daemon in a subprocess, fake without added latency)")
    rows, firsts = [], {}
    for notes in sizes:
        first, second = first_cycles(state_dir, notes)
        firsts[notes] = first
        print(f"  {notes:>7,} notes: first cycle {first['seconds']:6.2f} s wall, "
              f"{first['cpu_seconds']:6.2f} s CPU; unchanged cycle {second['seconds']:5.2f} s; "
              f"peak RSS {first['VmHWM'] / 1024:6.1f} MiB")
    small, large = sizes[0], sizes[-1]
    ratio = firsts[large]["cpu_seconds"] / max(firsts[small]["cpu_seconds"], 1e-9)
    print(f"  CPU ratio {large:,} / {small:,} notes: {ratio:.0f}× for {large // small}× the "
          "notes (linear: about the same, quadratic: its square)")
    baseline = ack_while_processing(state_dir, 100)
    loaded = ack_while_processing(state_dir, large)
    show = (lambda s: "none" if s is None else f"{s:.2f} s")  # noqa: E731
    print(f"  time to 👀 on another MR: {show(baseline)} beside a 100-note thread, "
          f"{show(loaded)} while the {large:,}-note thread is processed")
    top = firsts[large]
    rows.append(Row(f"8. first cycle, thread of {large:,} notes",
                    f"{top['seconds']:.2f} s wall, {top['cpu_seconds']:.2f} s CPU "
                    f"({ratio:.0f}× the CPU of {small:,} notes)", "< 2 s, linear",
                    top["seconds"] < 2.0))
    rows.append(Row(f"8. peak RSS, thread of {large:,} notes",
                    f"{top['VmHWM'] / 1024:.0f} MiB", "< 200 MB",
                    top["VmHWM"] * 1024 < 200 * 10**6))
    rows.append(Row(f"8. time to 👀 on another MR meanwhile ({large:,} notes)",
                    f"{show(loaded)} (baseline {show(baseline)})"))
    return rows


if __name__ == "__main__":  # alone: python bench/fig_longthread.py [--quick]
    quiet()
    for row in run(Path(tempfile.mkdtemp()), quick="--quick" in sys.argv):
        print(f"{row.figure}: {row.measured} ({row.verdict})")
