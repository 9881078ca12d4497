"""One writer at a time on a repository's review store, across processes: a person's
commands, an agent's MCP calls, the AI runner and a watching daemon (docs/DESIGN.md §14,
"Writers, one at a time").

Why a `flock` on a file rather than SQLite's `BEGIN IMMEDIATE` alone: each write is already
one immediate transaction, but an `update` reads the review, asks git (seconds, outside any
transaction), then writes threads from what it read, and every write is followed by the
`review.json` export, which reads again. A lock held across the whole read → git → write →
export is what makes two updates see each other; a transaction cannot be held across the git
calls without blocking every reader's WAL checkpoint. `flock` is released by the kernel when
its process dies (a `kill -9` leaves no stale lock), and is taken per open file description,
so two books in one process exclude each other as two processes do.

The same kind of lock on `runner.lock` lets one in-process AI runner work at a time
(local_respond.py): SQLite stores hold every lease of their one process (store/leases.py),
so two commands' runners would each answer the same message and review the same head.

Within a process the lock is re-entrant for the task holding it (an operation that writes
several times holds it once); other tasks wait on an asyncio lock first, then on the file,
in the lock's own thread: waiters never occupy the default executor that the holder needs
for its git calls.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from livereview.store.local_folder import LOCK_NAME, open_lock_file


class WriteLock:
    def __init__(self, folder: Path, name: str = LOCK_NAME) -> None:
        self.folder, self.name = folder, name
        self._fd: int | None = None
        self._tasks: asyncio.Lock | None = None
        self._owner: asyncio.Task[object] | None = None
        self._depth = 0
        self._waiter: ThreadPoolExecutor | None = None

    @contextlib.asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        me = asyncio.current_task()
        if me is not None and me is self._owner:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        if self._tasks is None:
            self._tasks = asyncio.Lock()
        tasks = self._tasks
        await tasks.acquire()
        try:
            fd = await self._locked(tasks)
        except asyncio.CancelledError:
            raise  # `_locked` lets the other tasks in once its thread is done
        except BaseException:
            tasks.release()
            raise
        self._owner, self._depth = me, 1
        try:
            yield
        finally:
            self._owner, self._depth = None, 0
            fcntl.flock(fd, fcntl.LOCK_UN)
            tasks.release()

    async def _locked(self, tasks: asyncio.Lock) -> int:
        if self._fd is None:
            self._fd = open_lock_file(self.folder, self.name)
        fd = self._fd
        if self._waiter is None:
            self._waiter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lock-wait")
        waiting = asyncio.get_running_loop().run_in_executor(
            self._waiter, fcntl.flock, fd, fcntl.LOCK_EX)
        try:
            await asyncio.shield(waiting)
        except asyncio.CancelledError:
            # The thread still takes the lock: only once it gave it back may another task
            # of this process wait on the same descriptor (a second flock on it would pass).
            waiting.add_done_callback(lambda done: _release(fd, done, tasks))
            raise
        return fd

    def close(self) -> None:
        if self._waiter is not None:
            self._waiter.shutdown(wait=False)
            self._waiter = None
        if self._fd is not None:
            os.close(self._fd)  # the kernel releases a lock still held
            self._fd = None


def _release(fd: int, taking: asyncio.Future[None], tasks: asyncio.Lock) -> None:
    if not taking.cancelled() and taking.exception() is None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    tasks.release()
