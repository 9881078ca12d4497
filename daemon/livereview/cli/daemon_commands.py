"""`run`, `once` and `check`: the commands that start the daemon's machinery. Raises
StoreError for cli/commands.py to say in one line."""

from __future__ import annotations

import argparse
import signal
import sys
from typing import TYPE_CHECKING

from livereview.cli.exits import EXIT_OK, EXIT_RUNTIME, EXIT_SIGINT, EXIT_USAGE

if TYPE_CHECKING:
    from livereview.settings import Settings
    from livereview.web.beside import Beside


async def check(settings: Settings) -> int:
    from livereview.cli.check import check as check_all
    from livereview.cli.check import render

    rows = await check_all(settings)
    print(render(rows))
    return EXIT_OK if all(r.ok for r in rows) else EXIT_RUNTIME



async def _daemon(settings: Settings, args: argparse.Namespace,
                  web: Beside | None = None) -> int:
    """`run` and `once`; `run` serves the web face too with `[web] listen`. Raises
    StoreError or ListenError for `main` to say in one line."""
    import contextlib
    import cProfile
    import time

    from livereview.app.daemon import App
    from livereview.cli import progress
    from livereview.cli.poll_profile import profile_report
    from livereview.metrics import Metrics

    metrics = Metrics(replica=settings.daemon.replica)
    if args.command == "run" and settings.daemon.metrics_listen:
        metrics.serve(settings.daemon.metrics_listen)  # a taken port: fail before creating
    app = App.create(settings, metrics=metrics, upgrade_apart=True)  # alembic stays out
    try:
        if args.command == "run":
            async with contextlib.AsyncExitStack() as serving:
                if web is not None:  # after App.create: the console reads its database
                    from livereview.web.beside import serving as web_serving

                    await serving.enter_async_context(web_serving(web, metrics))
                await app.run()
            # Ctrl-C is 130 as for any command a shell interrupts; SIGTERM is the service
            # manager's ordinary stop, which systemd expects to end in 0.
            return EXIT_SIGINT if app.stopped_by == signal.SIGINT else EXIT_OK
        profiler = cProfile.Profile() if args.profile else None
        started = time.perf_counter()
        if profiler:
            profiler.enable()
        # A terminal sees the first sweep of a big host (10 MRs or more) as a bar per host;
        # JSON logs are for machines, and `run` says its progress in log lines.
        with progress.bars(sys.stderr, minimum=10, unit="merge requests",
                           enabled=settings.daemon.log_format != "json") as shown:
            app.on_progress = shown.update if shown else None
            reports = await app.once()
        if profiler:
            profiler.disable()
            print(profile_report(reports, time.perf_counter() - started, profiler))
        failed = sorted(name for name, report in reports.items() if not report.ok)
        if failed or not reports:
            print("livereview: once: " + (f"polling failed on {', '.join(failed)}" if failed
                                          else "no host could be polled")
                  + " (the log lines above say why)", file=sys.stderr)
            return EXIT_RUNTIME
        return EXIT_OK
    finally:
        await app.close()


def run_daemon(settings: Settings, args: argparse.Namespace) -> int:
    from livereview.metrics import ListenError
    from livereview.tools.errors import BadInput

    web = None
    if args.command == "run" and settings.web.listen:
        from livereview.web.beside import planned

        try:
            web = planned(settings)
        except BadInput as exc:  # `[web] listen` refused before anything starts (DESIGN §11)
            print(f"livereview: {exc}", file=sys.stderr)
            return EXIT_USAGE
    try:
        import asyncio

        return asyncio.run(_daemon(settings, args, web))
    except ListenError as exc:
        print(f"livereview: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
