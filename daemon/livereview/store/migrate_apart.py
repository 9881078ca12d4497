"""The daemon's schema upgrade, run in a short-lived child process.

Importing alembic (and mako) and running an upgrade costs the process about 13 MiB of RSS
for good: freed modules do not give their memory back to the OS. The daemon is a
long-running sidecar with a memory budget (docs/performance.md, "Memory of a sidecar"), so
when its database is new or older than this version, `run`/`once` upgrade it in a child
that exits afterwards; a current schema (every other start) spawns nothing. The CLI's and
the tools' `migrate` stays in-process: they exit soon anyway.

A spawned `python -c`, not a fork: the parent may already hold threads (the metrics
server, the web console, a test's fake hosts) whose locks a fork would copy held. The
database URL, password included, goes to the child on stdin, never on its command line
(`ps` shows that to every user). The child runs the same `migrate` as the CLI (the same
PostgreSQL advisory lock between replicas) and hands a `StoreError` back as its class and
message, which the parent raises again: the operator reads the same one line as before.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from sqlalchemy import Engine

from livereview.store import engine as engines
from livereview.store.faults import StoreCorrupt, StoreError, StoreFatal, StoreGone, StoreMissing

ERRORS: dict[str, type[StoreError]] = {
    cls.__name__: cls for cls in (StoreError, StoreFatal, StoreCorrupt, StoreGone, StoreMissing)}
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # holds livereview/: the parent's code
CHILD = ("import sys; sys.path.append(sys.argv[1]); "
         "from livereview.store.migrate_apart import child; sys.exit(child())")


def upgrade(database_url: str, busy_timeout_seconds: float, engine: Engine) -> None:
    """`engines.migrate(engine)`, with the upgrade itself (if one is due) in a child."""
    if engines.check_schema(engine, newer_only=True) == engines.revisions()[1]:
        return  # current: nothing to run, no child
    engine.dispose()  # no idle connection of ours beside the child's upgrade
    if not sys.executable:  # an embedding interpreter cannot start `python -c`
        engines.migrate(engine)
        return
    request = json.dumps({"url": database_url, "busy_timeout_seconds": busy_timeout_seconds})
    # -P: the working directory is not put on the child's import path; the parent's package
    # root is appended last (never ahead of the standard library), for a parent that was
    # not started from an installed livereview.
    done = subprocess.run(  # noqa: S603 - our own interpreter and code, no shell
        [sys.executable, "-P", "-c", CHILD, str(PACKAGE_ROOT)], input=request,
        capture_output=True, text=True, check=False)
    if done.returncode == 0:
        return
    raise _error(done, engine.url.password)


def _error(done: subprocess.CompletedProcess[str], password: str | None) -> StoreError:
    """The child's StoreError as it raised it; any other death as one StoreError line."""
    try:
        said = json.loads(done.stdout)
        return ERRORS[said["error"]](str(said["message"]))
    except (ValueError, KeyError, TypeError):
        pass
    lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
    last = " ".join(lines[-1].split())
    if password:
        last = last.replace(password, "***")
    return StoreError(f"the database's schema upgrade failed in its child process: {last}")


def child() -> int:
    """Read the request on stdin, migrate, say a StoreError on stdout as JSON."""
    request = json.loads(sys.stdin.read())
    try:
        engine = engines.create(str(request["url"]), float(request["busy_timeout_seconds"]))
        try:
            engines.migrate(engine)
        finally:
            engine.dispose()
    except StoreError as exc:
        named = next(c.__name__ for c in type(exc).__mro__ if c.__name__ in ERRORS)
        json.dump({"error": named, "message": str(exc)}, sys.stdout)
        return 1
    return 0
