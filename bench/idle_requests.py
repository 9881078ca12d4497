"""Requests per idle poll cycle against the loopback fake GitLab, for N watched repos; then
idle requests per minute and idle CPU per host (GitHub, GitLab) with targets and verdicts
(figure 2c, fig_idle_hosts.py) at 1, 20 and 200 repos (or the N given).

    .venv/bin/python bench/idle_requests.py [N ...]

Each repo has one open MR with a comment, last touched an hour ago. After the first
cycle (first sight fetches every MR), nothing changes, so every further cycle is pure
idle cost: one simulated minute of hot cycles (3 s) with the cold one every 30 s, at
50 ms per request. Figure 2 of the suite (`bench/run.py --only 2`) is the same
measurement with five MRs per repo and the naive baseline.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import fig_idle
import fig_idle_hosts
from common import LATENCY, cores, quiet


def main(sizes: list[int]) -> None:
    quiet()
    print(f"cores: {cores()}; one idle minute after warm-up "
          f"({fig_idle.CYCLES_PER_MINUTE} cycles, {LATENCY * 1000:.0f} ms per request)")
    print(f"{'repos':>6} {'requests/cycle':>15} {'requests/min':>13} {'ms/cycle':>9}")
    base = None
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            r = asyncio.run(fig_idle.measure(n, 1, Path(tmp)))
            base = base or r.per_cycle
            print(f"{n:>6} {r.per_cycle:>15.2f} {r.per_minute:>13.1f} {r.hot_ms:>9.1f}   "
                  f"ratio to first: {r.per_cycle / base:.2f}")
        rows = fig_idle_hosts.run(Path(tmp), sizes=tuple(sizes))
    print()
    for row in rows:
        print(f"{row.figure:<48} {row.measured:>18}  target {row.target:<7} {row.verdict}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or list(fig_idle_hosts.SIZES))
