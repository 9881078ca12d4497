"""`livereview lessons …`: the governance of what the bot learned.

Proposed lessons wait for a person: list, show, approve, reject, archive; export them as
TOML or JSON to review them in git, and import them back (duplicates are merged).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

import tomli_w

from livereview.app.wiring import open_store
from livereview.cli.lesson_args import VERBS
from livereview.core import lesson_file
from livereview.core.model import Lesson
from livereview.settings import Settings
from livereview.store import lessons as lesson_rows
from livereview.store.db import Store


def _line(lesson: Lesson) -> str:
    return f"L{lesson.id:<4} {lesson.status:<9} {lesson.scope}  {lesson.key}: {lesson.value}"


def _read(path: Path) -> list[Lesson]:
    try:
        return lesson_file.read(path.read_text(encoding="utf-8"), path.suffix == ".json")
    except lesson_file.LessonFileError as exc:
        raise lesson_file.LessonFileError(f"{path}: {exc}") from None


def run(settings: Settings, args: argparse.Namespace) -> int:
    """Exit code 0, or 2 for a bad id or file (one line on stderr). Only `import` may
    create the database (seeding lessons before the first run); the other verbs need the
    daemon's, and reading ones never write."""
    daemon = settings.daemon
    if args.verb == "import":
        store = open_store(daemon)
    else:
        store = Store.open_existing(daemon.database_url, daemon.busy_timeout_seconds,
                                    read_only=args.verb in ("list", "show", "export"))
    now = datetime.now().astimezone()
    try:
        if args.verb == "list":
            found = store.transaction(lesson_rows.everything, args.status)
            if args.json:
                print(json.dumps([_as_dict(lesson) for lesson in found], indent=2))
            else:
                print("\n".join(_line(lesson) for lesson in found) or "no lessons")
        elif args.verb == "show":
            lesson = store.transaction(lesson_rows.get, args.id)
            if lesson is None:
                raise LookupError(f"no lesson {args.id}")
            print(json.dumps(_as_dict(lesson), indent=2))
        elif args.verb in VERBS:
            print(_line(store.transaction(lesson_rows.set_status, args.id, VERBS[args.verb],
                                          now)))
        elif args.verb == "export":
            items = store.transaction(lesson_rows.export)
            text = (json.dumps({"lessons": items}, indent=2) + "\n" if args.format == "json"
                    else tomli_w.dumps({"lessons": items}))
            if args.output:
                args.output.write_text(text, encoding="utf-8")
            else:
                sys.stdout.write(text)
        else:
            added, merged = store.transaction(lesson_rows.import_, _read(args.file), now)
            print(f"imported {added} lessons, merged {merged} duplicates")
    except BrokenPipeError:  # stdout closed early (`| head`): cli.main ends quietly
        raise
    except (LookupError, ValueError, OSError) as exc:  # LessonFileError is a ValueError
        print(f"livereview: lessons {args.verb}: {exc}", file=sys.stderr)
        return 2
    finally:
        store.close()
    return 0


def _as_dict(lesson: Lesson) -> dict[str, object]:
    return {"id": lesson.id, "key": lesson.key, "value": lesson.value, "scope": lesson.scope,
            "status": lesson.status, "source_message_id": lesson.source_message_id,
            "created_by": lesson.created_by}
