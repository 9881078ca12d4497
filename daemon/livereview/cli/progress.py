"""Progress of long work, for a person at a terminal: rich bars on stderr while a command
works through many things (a hosted review's files, `once`'s first sight of a big host,
`db copy`'s tables, a local review's files). Only when stderr is a terminal and `CI` is not
set: a script, a pipe or a CI log sees nothing of it, and stdout is never touched.

rich is imported here, when a long command starts one (`bars` yields None, importing
nothing, otherwise): the light commands never load it (tests/e2e/test_cli_imports.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID


def wanted(stream: TextIO) -> bool:
    """Progress for people: a terminal, and not CI (where a terminal may be emulated)."""
    return stream.isatty() and not os.environ.get("CI")


class Bars:
    """One bar per name (a host, a table, "files"), created at its first update."""

    def __init__(self, progress: Progress, minimum: int, unit: str) -> None:
        self._progress, self.minimum, self.unit = progress, minimum, unit
        self._tasks: dict[str, TaskID] = {}

    def update(self, name: str, done: int, total: int) -> None:
        """`done` of `total` (0: not known yet); a total under `minimum` shows nothing."""
        if total and total < self.minimum:
            return
        task = self._tasks.get(name)
        if task is None:
            task = self._tasks[name] = self._progress.add_task(
                f"{name}: {self.unit}" if self.unit else name, total=total or None)
        self._progress.update(task, completed=done, total=total or None)

    def counter(self, name: str) -> _Counter:
        """A (done, total) callback for one bar: what review/reading.py's hook takes."""
        return _Counter(self, name)


class _Counter:
    def __init__(self, bars: Bars, name: str) -> None:
        self.bars, self.name = bars, name

    def __call__(self, done: int, total: int) -> None:
        self.bars.update(self.name, done, total)


@contextlib.contextmanager
def bars(stream: TextIO, minimum: int = 0, unit: str = "", *, enabled: bool = True
         ) -> Iterator[Bars | None]:
    """Bars drawn on `stream` until the block ends (they stay, finished), or None when
    progress is not wanted there (or not `enabled`); each bar is "NAME: UNIT", done/total,
    the time elapsed."""
    if not enabled or not wanted(stream):
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    # stdout stays the command's own: only stderr's writes are printed above the bars.
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=Console(file=stream, stderr=True),
                        redirect_stdout=False, redirect_stderr=True)
    with progress:
        yield Bars(progress, minimum, unit)
