"""`livereview db …`: the database itself (docs/DESIGN.md §12).

`db migrate` brings a database to this version's schema (what starting the daemon does,
without starting it). `db copy --from sqlite:///… --to postgresql+psycopg://…` moves the
whole history to another database — stop the daemon first — so the bot neither forgets
what it answered nor answers it twice. Both are idempotent.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TextIO

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from livereview.cli import progress
from livereview.settings import ConfigError, Settings
from livereview.settings.errors import Invalid
from livereview.settings.rules import database_url
from livereview.store import copy as copying
from livereview.store.db import Store
from livereview.store.engine import StoreError, sqlite_file

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    db = sub.add_parser("db", help="the database: migrate it, copy it to another")
    verbs = db.add_subparsers(dest="verb", required=True, metavar="VERB")
    migrate = verbs.add_parser("migrate", help="bring the database to this version's schema")
    migrate.add_argument("--url", help="database URL (default: the config's database_url)")
    migrate.add_argument("--create", action="store_true",
                         help="create the SQLite file --url names if it is missing (the "
                              "config's database is created as starting the daemon would)")
    copy = verbs.add_parser("copy", help="copy every row into another, empty database "
                                         "(stop the daemon first)")
    copy.add_argument("--from", dest="source", required=True, metavar="URL",
                      help="e.g. sqlite:////var/lib/livereview/livereview.db")
    copy.add_argument("--to", dest="target", required=True, metavar="URL",
                      help="e.g. postgresql+psycopg://livereview@db/livereview")


def run(args: argparse.Namespace, settings: Callable[[], Settings]) -> int:
    """`settings` loads the config, for `migrate` without --url only. Failures are one
    line: a bad URL or config exits 2, a database that cannot be used 1."""
    try:
        return _run(args, settings)
    except ConfigError as exc:
        print(f"livereview: config error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except StoreError as exc:
        print(f"livereview: db {args.verb}: {exc}", file=sys.stderr)
        return EXIT_RUNTIME


def _run(args: argparse.Namespace, settings: Callable[[], Settings]) -> int:
    if args.verb == "migrate":
        url = args.url or settings().daemon.database_url
        if (bad := _bad_url(url, "--url")) is not None:
            return bad
        missing = sqlite_file(url)
        if args.url and not args.create and missing is not None and not missing.exists():
            # A mistyped path would otherwise become a new, empty database, "current".
            print(f"livereview: db migrate: --url: no database at {missing} (add --create "
                  "to create it)", file=sys.stderr)
            return EXIT_USAGE
        store = Store.open(url)
        store.close()
        print(f"{_shown(url)}: schema is current")
        return EXIT_OK
    for url, option in ((args.source, "--from"), (args.target, "--to")):
        if (bad := _bad_url(url, option)) is not None:
            return bad
    if make_url(args.source) == make_url(args.target):
        print("livereview: db copy: --from and --to name the same database", file=sys.stderr)
        return EXIT_USAGE
    return _copy(args.source, args.target, sys.stderr)


def _copy(source_url: str, target_url: str, stream: TextIO) -> int:
    source = Store.open_existing(source_url)  # read-only, at this version's schema
    try:
        target = Store.open(target_url)
        try:
            with progress.bars(stream) as shown:
                report = copying.copy(source.engine, target.engine,
                                      shown.update if shown else None)
        finally:
            target.close()
    except copying.CopyRefused as exc:
        print(f"livereview: db copy: {exc}", file=sys.stderr)
        return EXIT_RUNTIME
    finally:
        source.close()
    rows = sum(report.counts.values())
    if report.already:
        print(f"{_shown(target_url)} already holds this copy ({rows} rows, every table's "
              "count matches): nothing written")
    else:
        print(f"copied {rows} rows in {len(report.counts)} tables to {_shown(target_url)}; "
              "every table's row count matches the source")
    return EXIT_OK


def _bad_url(url: str, option: str) -> int | None:
    try:
        backend = make_url(database_url(url)).get_backend_name()
    except Invalid as exc:
        print(f"livereview: db: {option}: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    except ArgumentError:
        backend = ""
    if backend not in ("sqlite", "postgresql"):
        print(f"livereview: db: {option}: expected sqlite:///PATH or "
              f"postgresql+psycopg://USER@HOST/DB, got {_shown(url)!r}", file=sys.stderr)
        return EXIT_USAGE
    return None


def _shown(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url.split("@")[-1]  # never echo what may be a password
