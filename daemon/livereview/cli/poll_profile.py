"""`livereview once --profile`: where one cycle's time went."""

from __future__ import annotations

import cProfile
import io
import pstats

from livereview.sync.cycle_report import CycleReport


def profile_report(reports: dict[str, CycleReport], total_seconds: float,
                   profiler: cProfile.Profile, top: int = 20) -> str:
    lines = [f"once: {total_seconds * 1000:.0f} ms in all (poll cycle, then the reply jobs)"]
    for host, report in reports.items():
        lines.append(
            f"  poll {host}: {report.seconds * 1000:.0f} ms, {report.requests} requests, "
            f"{report.listed} listed, {report.fetched} MRs fetched, {report.events} events, "
            f"{report.jobs} new jobs, {report.errors} errors")
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    # Our own functions by cumulative time: the phases (listing, fetch, diff, store, jobs).
    stats.sort_stats(pstats.SortKey.CUMULATIVE).print_stats(r"livereview/", top)
    body = out.getvalue()
    start = body.find("   ncalls")
    lines.append(f"top {top} livereview functions by cumulative time:")
    lines.append(body[start:].rstrip() if start >= 0 else body.rstrip())
    return "\n".join(lines)
