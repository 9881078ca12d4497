"""The lessons queue as operations (DESIGN §10: what the bot learned waits for a person):
the lessons by status, and a person's verdict on one — the same rows `livereview lessons
list|approve|reject|archive` reads and writes, for the web face's console (DESIGN §11).
"""

from __future__ import annotations

from datetime import datetime

from livereview.core.model import Lesson
from livereview.settings import DaemonSettings
from livereview.store import lessons as lesson_rows
from livereview.store.db import Store
from livereview.store.engine import StoreMissing
from livereview.tools.errors import MAX_ID, BadInput

VERDICTS = {"approve": "active", "reject": "rejected", "archive": "archived"}
ORDER = ("proposed", "active", "rejected", "archived")  # what waits for a person first


class NoLessonStore(BadInput):
    """The daemon's database does not exist yet: no lesson was ever proposed."""


class LessonQueue:
    """The lessons of the daemon's database, opened writable (a verdict is a write) and
    never created here."""

    def __init__(self, store: Store) -> None:
        self.store = store

    @classmethod
    def open(cls, daemon: DaemonSettings) -> LessonQueue:
        try:
            return cls(Store.open_existing(daemon.database_url, daemon.busy_timeout_seconds,
                                           read_only=False))
        except StoreMissing as exc:
            raise NoLessonStore(str(exc)) from None

    async def lessons(self) -> list[Lesson]:
        found = await self.store.run(lesson_rows.everything, None)
        return sorted(found, key=lambda lesson: (ORDER.index(lesson.status)
                                                 if lesson.status in ORDER else len(ORDER),
                                                 lesson.id))

    async def decide(self, lesson_id: int, verdict: str) -> Lesson:
        """Approve (active for the next answer), reject or archive one lesson."""
        if verdict not in VERDICTS:
            raise BadInput(f"verdict: {verdict[:40]!r} is not one of {', '.join(VERDICTS)}")
        if not 1 <= lesson_id <= MAX_ID:
            raise BadInput(f"no lesson {lesson_id}")
        try:
            return await self.store.run(lesson_rows.set_status, lesson_id, VERDICTS[verdict],
                                        datetime.now().astimezone())
        except LookupError as exc:
            raise BadInput(str(exc)) from None

    async def export(self) -> list[dict[str, str]]:
        """Every lesson as `livereview lessons export` writes it."""
        return await self.store.run(lesson_rows.export)

    def close(self) -> None:
        self.store.close()
