"""The livereview benchmark suite: one command, figures against loopback fakes.

    .venv/bin/python bench/run.py [--quick] [--only 1,2,...]

Prints every figure as it is measured, then a table `figure | measured | target |
pass/fail`, and writes the table, the machine (cores, Python, date), the code measured
(git HEAD, uncommitted daemon files) and the full log to bench/results.md. Benchmarks
print figures, never assert. All traffic stays on 127.0.0.1.

1 time-to-ack / time-to-reply     (fig_live.latency)      real daemon, default settings
2 requests per idle minute, naive  (fig_idle)              10 / 50 / 200 repos
2c idle req/min and CPU per host  (fig_idle_hosts)        GitHub, GitLab: 1 / 20 / 200 repos
2d GitHub time to 👀, 200 repos    (fig_github_ack)        real daemon, active and quiet PRs
3 diff of a 1 000-note MR          (fig_pure)              pure function
4 filtering 1 000 comments         (fig_pure)              pure function
5 peak RSS with 10 000 MRs         (fig_memory)            daemon in a subprocess, answering
6 reply throughput                 (fig_live.throughput)   real daemon, burst of mentions
7 hot 1 000-note MR, per cycle     (fig_bigmr)             real poller, where time goes
8 threads of 1k/10k/100k notes     (fig_longthread)        daemon in a subprocess; 👀 meanwhile
9 Bitbucket DC idle req, ack       (fig_bitbucket_server)  10 / 200 repos, real daemon
10 Bitbucket Cloud idle, time-to-ack (fig_bitbucket_cloud)   simulated hours, 10 / 200 repos
11 one review of 10/300/3 000 files (fig_review)           the CLI in a subprocess
12 MR tools: comments filter       (fig_tools)             store read + pure filter, 1 000
13 replicas on PostgreSQL (a, b)   (fig_replicas)          only with LIVEREVIEW_TEST_POSTGRES_URL
14 an answer's wider context      (fig_context)           200-thread MR, with / without
15 Bitbucket idle cost per repo    (fig_bitbucket_idle)    DC and Cloud, 1 / 20 / 200 repos
16 first sight of a big GitLab     (fig_firstsight)        400 / 10 000 MRs, 👀, SIGTERM
17 CLI start-up per command        (fig_startup)           fresh processes, beside python -c pass
18 `livereview web` page timings   (fig_web)               10 / 3 000-file local reviews
19 the peer, side by side          (fig_peer)              PR-Agent's GitHub poller, same fake
20 one file of a 3 000-file MR     (fig_onefile)           each host, before / after path filters

Every registered figure is written to results.md with its target and verdict (a figure that
cannot run says why in its row); the plots go to docs/img/ (bench/plots.py).
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TextIO

import fig_bigmr
import fig_bitbucket_cloud
import fig_bitbucket_idle
import fig_bitbucket_server
import fig_context
import fig_firstsight
import fig_github_ack
import fig_idle
import fig_idle_hosts
import fig_live
import fig_longthread
import fig_memory
import fig_onefile
import fig_peer
import fig_pure
import fig_replicas
import fig_review
import fig_startup
import fig_tools
import fig_web
import plots
from common import SCHEDULER_ERRORS, SERIES, Row, cores, quiet

HERE = Path(__file__).resolve().parent
METHOD = """## How these were measured

- GitLab is `livereview.sandbox` FakeGitLab served by FakeGitLabServer on 127.0.0.1 with
  `latency_seconds = 0.05`, except figure 5 (0 ms: 30 000 requests at 50 ms would take
  over 6 minutes; the table extrapolates). The fake sends no `RateLimit-*` headers here
  (self-managed GitLab's default, rate limits off): the stock fake always advertises
  600 requests/min, which the daemon paces itself against, and that limit — not the
  daemon — would then set figures 5 and 6. Figure 6 prints what that limit would allow.
- Figures 1 and 6 run the real daemon in-process (`App.create(settings)`, `app.run(stop)`
  as a task) with a config of defaults except database, metrics, hosts, repos and ai
  (plus the figure-6 overrides named in the table). Times are the fake's own timestamps:
  note `created_at` → the bot's award `created_at` (ack) and the reply's `created_at`.
  Mentions go to several MRs (at most 30 per MR: `max_replies_per_mr_per_hour`).
- Figure 2 runs `app.cycle()` directly: 20 cycles = one minute at the default 3 s hot
  interval, every 10th cold as `App.tick` schedules it, the poller's clock advanced 3 s
  per cycle; all MRs' last activity is an hour old. Naive = one `GET …/discussions` per
  open MR per 3 s (issued once against the fake at the smallest size to check the count).
- Figure 5 runs the daemon's side in a subprocess (bench/memory_driver.py: what
  `livereview run` imports, not the fakes; the schema made beforehand by `livereview db
  migrate`, as on any start after the first) and reads its VmHWM: 10 000 MRs, one in 100
  with a mention at first sight and 5 more mentions after each cycle, each cycle followed
  by the reply worker's drain (answers through the daemon's own model client from the
  stand-in model). The fake's listing rows are built once (the stock fake rebuilds every
  MR's JSON for each listing page, ~40 s of CPU at 10 000 MRs).
- Figures 3, 4: best of N with `time.perf_counter`, snapshots built from the frozen model.
- Figure 10 runs the daemon's code (`App.cycle()` and `worker.drain()`) against the fake
  Bitbucket Cloud on simulated time: one clock drives the fake, the poller, the worker and
  the adapter's quota bucket, 3 s per cycle, and a request the bucket holds back moves the
  clock instead of waiting. First sight runs without quota; then an idle hour (requests
  per minute over its second half) and an hour of mentions at seeded random times
  (mention → the bot's acknowledging reply, by the fake's timestamps).
- Figure 16 runs the daemon in a subprocess (bench/firstsight_driver.py) against the fake
  GitLab at 50 ms per request: 50 open MRs per repo, 98 % idle for three days (before the
  default 24 h backfill baseline), 2 % active an hour ago. First sweep = one cold cycle
  that waits for every MR it reads. CPU per MR read: a sweep of 400 active MRs at 0 ms,
  the driver's CPU over the MRs read (listing included). 👀: a mention made just before the
  process starts, on an MR idle for days, to the fake's award timestamp (the process's
  start-up — imports, migrations, identity — included); then SIGTERM, to the exit.
- Figure 19 runs PR-Agent 0.2.4's `pr_agent/servers/github_polling.py` (from PyPI, in its
  own virtual environment under ~/.cache/livereview-bench; the pins PyPI no longer serves
  relaxed, and the two-line GHES base-URL patch applied to the installed copy, both printed
  in the log) and `livereview run` as two processes on one fake GitHub served in GHES form
  at 50 ms per request, each with its own account and token, both answering through the
  stand-in model. Requests are counted per token; CPU and RSS from /proc of each process.
  👀 and answer: from writing the mention to the bot's eyes reaction / answer in the fake's
  state, observed every 20 ms. The peer's answer is `/ask` (it answers nothing else).
"""
RESULTS = HERE / "results.md"
IMAGES = HERE.parent / "docs" / "img"


class Tee(io.TextIOBase):
    """Writes to the terminal and keeps a copy for results.md."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.stream.write(text)
        self.copy.write(text)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()


def code_version() -> str:
    def git(*args: str) -> str:
        exe = shutil.which("git")
        if exe is None:
            return ""
        try:
            return subprocess.run([exe, *args], cwd=HERE.parent, capture_output=True,  # noqa: S603
                                  text=True, check=False, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            return ""

    head = git("log", "-1", "--format=%h %s").strip() or "unknown"
    dirty = [line.split(maxsplit=1)[-1]
             for line in git("status", "--porcelain", "--", "daemon").splitlines() if line]
    return head + (f" + uncommitted changes in {', '.join(dirty)}" if dirty else "")


def figure_number(row: Row) -> int:
    match = re.match(r"\d+", row.figure)
    return int(match.group()) if match else 99


def table(rows: list[Row]) -> str:
    lines = ["| figure | measured | target | pass/fail |", "|---|---|---|---|"]
    for r in rows:
        measured = r.measured + (f" — {'; '.join(r.notes)}" if r.notes else "")
        lines.append(f"| {r.figure} | {measured} | {r.target} | {r.verdict} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, about a minute")
    parser.add_argument("--only", default="", help="comma-separated figure numbers, e.g. 1,6")
    args = parser.parse_args(argv)
    only = {int(x) for x in args.only.split(",") if x.strip()}
    quiet()
    code = code_version()
    tee = Tee(sys.stdout)
    sys.stdout = tee
    started = time.perf_counter()
    mode = "quick" if args.quick else "full"
    print(f"livereview benchmarks ({mode}): {cores()} cores, Python "
          f"{platform.python_version()}, {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}")
    rows: list[Row] = []
    timings: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="livereview-bench-") as tmp:
        state = Path(tmp)
        sections: list[tuple[set[int], str, Callable[[], list[Row]]]] = [
            ({3, 4}, "3–4 pure core", lambda: fig_pure.run(quick=args.quick)),
            ({2}, "2 idle requests", lambda: fig_idle.run(state, quick=args.quick)),
            ({2}, "2c idle per host", lambda: fig_idle_hosts.run(state, quick=args.quick)),
            ({2}, "2d GitHub 👀", lambda: fig_github_ack.run(state, quick=args.quick)),
            ({1}, "1 latency", lambda: fig_live.latency(state, quick=args.quick)),
            ({6}, "6 throughput", lambda: fig_live.throughput(state, quick=args.quick)),
            ({7}, "7 hot big MR", lambda: fig_bigmr.run(state, quick=args.quick)),
            ({5}, "5 memory", lambda: fig_memory.run(state, quick=args.quick)),
            ({8}, "8 long thread", lambda: fig_longthread.run(state, quick=args.quick)),
            ({9}, "9 bitbucket dc", lambda: fig_bitbucket_server.run(state, quick=args.quick)),
            ({10}, "10 Bitbucket Cloud", lambda: fig_bitbucket_cloud.run(state, quick=args.quick)),
            ({11}, "11 review size", lambda: fig_review.run(state, quick=args.quick)),
            ({12}, "12 MR tools", lambda: fig_tools.run(state, quick=args.quick)),
            ({13}, "13 replicas", lambda: fig_replicas.run(state, quick=args.quick)),
            ({14}, "14 answer context", lambda: fig_context.run(state, quick=args.quick)),
            ({15}, "15 Bitbucket idle", lambda: fig_bitbucket_idle.run(state,
                                                                       quick=args.quick)),
            ({16}, "16 first sight", lambda: fig_firstsight.run(state, quick=args.quick)),
            ({17}, "17 CLI start-up", lambda: fig_startup.run(quick=args.quick)),
            ({18}, "18 web pages", lambda: fig_web.run(state, quick=args.quick)),
            ({19}, "19 the peer", lambda: fig_peer.run(state, quick=args.quick)),
            ({20}, "20 one file", lambda: fig_onefile.run(state, quick=args.quick)),
        ]
        for numbers, name, section in sections:
            if only and not numbers & only:
                continue
            t0 = time.perf_counter()
            try:
                rows += section()
            except Exception as exc:
                traceback.print_exc(file=sys.stdout)
                rows.append(Row(f"{name}", f"error: {type(exc).__name__}: {exc}", "—", False))
            timings.append((name, time.perf_counter() - t0))
    elapsed = time.perf_counter() - started
    rows.sort(key=figure_number)  # stable: each figure's rows keep their order
    print(f"\n{table(rows)}\n")
    print("section times: " + ", ".join(f"{n} {s:.0f} s" for n, s in timings)
          + f"; total {elapsed:.0f} s")
    if SCHEDULER_ERRORS.seen:
        print(f"APScheduler reported {len(SCHEDULER_ERRORS.seen)} failed poll tick(s) in all, "
              f"e.g. {SCHEDULER_ERRORS.seen[0]}")
    sys.stdout = tee.stream
    after = code_version()
    if after != code:
        code = f"{code} at the start; {after} at the end"
    write_results(rows, mode, elapsed, timings, tee.copy.getvalue(), code)
    print(f"written to {RESULTS.relative_to(HERE.parent)}")
    for path in plots.draw(SERIES, IMAGES):
        print(f"plot written to {path.relative_to(HERE.parent)}")
    return 0


def write_results(rows: list[Row], mode: str, elapsed: float,
                  timings: list[tuple[str, float]], log: str, code: str) -> None:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    machine = (f"- date: {datetime.now().astimezone():%Y-%m-%d %H:%M %Z}\n"
               f"- machine: {cores()} cores ({platform.machine()}, {platform.system()} "
               f"{platform.release()}), load average {load} at the end\n"
               f"- Python {platform.python_version()} ({sys.executable})\n"
               f"- code: {code}\n"
               f"- run: `.venv/bin/python bench/run.py{' --quick' if mode == 'quick' else ''}`"
               f" — {mode}, {elapsed:.0f} s ("
               + ", ".join(f"{n} {s:.0f} s" for n, s in timings) + ")\n")
    RESULTS.write_text(
        "# livereview benchmark results\n\n"
        "Loopback fakes only (sandbox GitLab with 50 ms per request unless a figure says "
        "otherwise, sandbox OpenAI-compatible LLM). Regenerate with `.venv/bin/python "
        "bench/run.py` (`--quick` for smaller sizes); the suite prints and never asserts.\n\n"
        f"{machine}\n{table(rows)}\n\n{METHOD}\n## Log\n\n```text\n{log.rstrip()}\n```\n",
        encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
