"""The local review store's write lock: one holder at a time across open descriptors (as
across processes), re-entrant for the task holding it, and a waiter that gives up leaves
nothing held."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
from pathlib import Path

import pytest

from livereview.core.local_model import UnsafeStore
from livereview.store.local_folder import LOCK_NAME
from livereview.store.local_lock import WriteLock


def held_elsewhere(folder: Path) -> bool:
    """Whether some descriptor holds the lock (asked of the kernel, without waiting)."""
    fd = os.open(folder / LOCK_NAME, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def test_the_task_holding_the_lock_takes_it_again_without_waiting(tmp_path: Path) -> None:
    lock = WriteLock(tmp_path)

    async def nested() -> bool:
        async with lock.held(), lock.held():
            inside = held_elsewhere(tmp_path)
        return inside and not held_elsewhere(tmp_path)

    try:
        assert asyncio.run(nested())
    finally:
        lock.close()


def test_a_second_descriptor_waits_until_the_first_lets_go(tmp_path: Path) -> None:
    first, second = WriteLock(tmp_path), WriteLock(tmp_path)
    order: list[str] = []

    async def both() -> None:
        entered = asyncio.Event()
        release = asyncio.Event()

        async def hold() -> None:
            async with first.held():
                order.append("first in")
                entered.set()
                await release.wait()
                order.append("first out")

        async def wait() -> None:
            async with second.held():
                order.append("second in")

        holder = asyncio.create_task(hold())
        await entered.wait()
        waiter = asyncio.create_task(wait())
        for _ in range(20):  # let the waiter run as far as it can get
            await asyncio.sleep(0)
        release.set()
        await asyncio.gather(holder, waiter)

    try:
        asyncio.run(both())
    finally:
        first.close()
        second.close()
    assert order == ["first in", "first out", "second in"]


def test_a_cancelled_waiter_leaves_the_lock_free_for_the_next(tmp_path: Path) -> None:
    first, second = WriteLock(tmp_path), WriteLock(tmp_path)

    async def run() -> bool:
        entered = asyncio.Event()
        release = asyncio.Event()

        async def hold() -> None:
            async with first.held():
                entered.set()
                await release.wait()

        async def wait() -> None:
            async with second.held():
                pytest.fail("a cancelled waiter got in")

        holder = asyncio.create_task(hold())
        await entered.wait()
        waiter = asyncio.create_task(wait())
        await asyncio.sleep(0)
        waiter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await waiter
        release.set()
        await holder
        async with second.held():  # the next one on the cancelled one's descriptor
            inside = held_elsewhere(tmp_path)
        return inside and not held_elsewhere(tmp_path)

    try:
        assert asyncio.run(run())
    finally:
        first.close()
        second.close()


def test_a_symlinked_lock_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / LOCK_NAME).symlink_to(tmp_path / "elsewhere")
    lock = WriteLock(tmp_path)

    async def take() -> None:
        async with lock.held():
            pass

    with pytest.raises(UnsafeStore, match="symlink"):
        asyncio.run(take())
    assert not (tmp_path / "elsewhere").exists()
