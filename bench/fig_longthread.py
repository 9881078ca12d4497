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

from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.loopback import Response

DRIVER = Path(__file__).with_name("longthread_driver.py")
SIZES = (1_000, 10_000, 30_000)  # within the default max_response_mb (32)
HUGE = 100_000  # ~80 MB of discussions: refused by default, read with max_response_mb = 128


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


def first_cycles(state_dir: Path, notes: int, max_response_mb: int = 32
                 ) -> list[dict[str, Any]]:
    gitlab, _ = populate(notes)
    with FrozenLongThread(gitlab) as server:
        proc = subprocess.run(  # noqa: S603 - our own interpreter and script
            [sys.executable, str(DRIVER), "cycles", server.url,
             str(state_dir / f"long-{notes}-{max_response_mb}.db"), "2",
             str(max_response_mb)],
            capture_output=True, text=True, check=False, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed")
    return [json.loads(line) for line in proc.stdout.splitlines()]


def ack_while_processing(state_dir: Path, notes: int, max_response_mb: int = 32
                         ) -> float | None:
    """Seconds from a mention on the small MR to its 👀, while the long one is processed."""
    gitlab, _ = populate(notes)
    with FrozenLongThread(gitlab) as server:
        proc = subprocess.Popen(  # noqa: S603 - our own interpreter and script
            [sys.executable, str(DRIVER), "daemon", server.url,
             str(state_dir / f"ack-{notes}.db"), str(max_response_mb)],
            stdout=subprocess.DEVNULL)
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


def _show(seconds: float | None) -> str:
    return "none" if seconds is None else f"{seconds:.2f} s"


def _line(label: str, first: dict[str, Any], second: dict[str, Any]) -> None:
    print(f"  {label:>28}: first cycle {first['seconds']:6.2f} s wall, "
          f"{first['cpu_seconds']:6.2f} s CPU, {first['errors']} MR refused; unchanged cycle "
          f"{second['seconds']:5.2f} s; peak RSS {first['VmHWM'] / 1024:6.1f} MiB")


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    sizes = SIZES[:2] if quick else SIZES
    print(f"\n## 8. one thread of {', '.join(f'{n:,}' for n in (*sizes, HUGE))} notes "
          "(daemon in a subprocess, fake without added latency)")
    firsts = {}
    for notes in sizes:
        first, second = first_cycles(state_dir, notes)
        firsts[notes] = first
        _line(f"{notes:,} notes", first, second)
    refused, _ = huge = first_cycles(state_dir, HUGE)
    _line(f"{HUGE:,} notes, default limit", *huge)
    read, read_again = first_cycles(state_dir, HUGE, 128) if not quick else (refused, refused)
    if not quick:
        _line(f"{HUGE:,}, max_response_mb 128", read, read_again)
    small, large = sizes[0], sizes[-1]
    ratio = firsts[large]["cpu_seconds"] / max(firsts[small]["cpu_seconds"], 1e-9)
    print(f"  CPU ratio {large:,} / {small:,} notes: {ratio:.0f}× for {large // small}× the "
          "notes (linear: about the same, quadratic: its square)")
    heavy, limit = (large, 32) if quick else (HUGE, 128)
    baseline = ack_while_processing(state_dir, 100)
    loaded = ack_while_processing(state_dir, heavy, limit)
    print(f"  time to 👀 on another MR: {_show(baseline)} beside a 100-note thread, "
          f"{_show(loaded)} while a {heavy:,}-note thread is processed")
    top = firsts[large]
    return [
        Row(f"8. first cycle, thread of {large:,} notes",
            f"{top['seconds']:.2f} s wall, {top['cpu_seconds']:.2f} s CPU, peak RSS "
            f"{top['VmHWM'] / 1024:.0f} MiB; CPU {ratio:.0f}× that of {small:,} notes",
            "linear"),
        Row(f"8. first cycle, thread of {HUGE:,} notes (over the default max_response_mb)",
            f"{refused['seconds']:.2f} s, peak RSS {refused['VmHWM'] / 1024:.0f} MiB, the MR "
            "refused with its reason", "< 2 s, < 200 MB",
            refused["seconds"] < 2.0 and refused["VmHWM"] * 1024 < 200 * 10**6),
        Row("8. the same read whole (max_response_mb = 128)",
            f"{read['seconds']:.2f} s wall, {read['cpu_seconds']:.2f} s CPU, peak RSS "
            f"{read['VmHWM'] / 1024:.0f} MiB; unchanged cycle {read_again['seconds']:.2f} s"),
        Row(f"8. time to 👀 on another MR while a {heavy:,}-note thread is processed",
            f"{_show(loaded)} (baseline {_show(baseline)})"),
    ]


if __name__ == "__main__":  # alone: python bench/fig_longthread.py [--quick]
    quiet()
    for row in run(Path(tempfile.mkdtemp()), quick="--quick" in sys.argv):
        print(f"{row.figure}: {row.measured} ({row.verdict})")
