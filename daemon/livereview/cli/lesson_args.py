"""`livereview lessons …`'s arguments, apart from the work (cli/lesson_commands.py) so that
parsing them imports no store.

A lesson is named as `lessons list` prints it, `L7`, or by its number alone, `7`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from livereview.cli.arg_types import row_id
from livereview.core.lessons import STATUSES

VERBS = {"approve": "active", "reject": "rejected", "archive": "archived"}


def lesson_id(text: str) -> int:
    """`L7` (as `lessons list` prints it) or `7`."""
    stripped = text.strip()
    return row_id(stripped[1:] if stripped[:1] in ("L", "l") else stripped)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lessons = sub.add_parser("lessons", help="review what the bot learned: list, approve, …")
    verbs = lessons.add_subparsers(dest="verb", required=True, metavar="VERB")
    listing = verbs.add_parser("list", help="all lessons, newest last")
    listing.add_argument("--status", choices=STATUSES)
    listing.add_argument("--json", action="store_true")
    for verb, status in (("show", None), *VERBS.items()):
        one = verbs.add_parser(verb, help=f"mark a lesson {status}" if status else
                               "one lesson in full")
        one.add_argument("id", type=lesson_id,
                         help="the lesson, as `lessons list` prints it (L7) or its number (7)")
    export = verbs.add_parser("export", help="every lesson as TOML or JSON (for git review)")
    export.add_argument("--format", choices=["toml", "json"], default="toml")
    export.add_argument("--output", type=Path, help="file to write (default: stdout)")
    load = verbs.add_parser(
        "import", help="add lessons from a file (TOML or JSON, as `export` writes it)",
        description="Add lessons from a TOML or JSON file, as `lessons export` writes it; "
                    "the same principle in the same scope merges into the one known. The "
                    "format (every field, what is refused): docs/lessons-file.md; an "
                    "example: contrib/lessons.example.toml. A bad entry is one line naming "
                    "it (lessons[N], from 0), its field and, in TOML, its line; nothing is "
                    "imported then (exit 2).")
    load.add_argument("file", type=Path, help="a .toml file, or .json")
