"""The code reader's diff cache (reply/code_reader.py): per MR and version, never shared
between two MRs whose heads are the same commit (a backport: one branch, two targets)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import cast

from livereview.core.model import Actor, MergeRequest, MRKey
from livereview.hosts.base import Host
from livereview.reply.code_reader import CodeReader

T = datetime(2026, 1, 1, tzinfo=UTC)


def _mr(iid: int, target: str, base: str) -> MergeRequest:
    return MergeRequest(MRKey("gl", "g/p", iid), "t", "", Actor("1", "a"), "feature", target,
                        "opened", "NEWHEAD", base, base, "", T, T)


class DiffsByMR:
    """A host whose diff of an MR names the MR and the version asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, str | None]] = []

    async def diff(self, key: MRKey, head_sha: str | None = None) -> str:
        self.calls.append((key.iid, head_sha))
        return f"diff of MR {key.iid} at {head_sha}"


def _both(version_head: str | None) -> tuple[str, str, DiffsByMR]:
    async def go() -> tuple[str, str, DiffsByMR]:
        reader, recording = CodeReader(), DiffsByMR()
        host = cast(Host, recording)
        first = await reader.diff(host, _mr(1, "main", "B1"), version_head)
        second = await reader.diff(host, _mr(2, "release", "B2"), version_head)
        return first, second, recording

    return asyncio.run(go())


def test_two_mrs_with_one_old_head_each_get_their_own_version_diff() -> None:
    first, second, _ = _both("OLDHEAD")
    assert (first, second) == ("diff of MR 1 at OLDHEAD", "diff of MR 2 at OLDHEAD")


def test_two_mrs_with_one_head_each_get_their_own_current_diff() -> None:
    first, second, host = _both(None)
    assert (first, second) == ("diff of MR 1 at None", "diff of MR 2 at None")
    assert host.calls == [(1, None), (2, None)]


def test_one_mr_asked_twice_about_one_version_is_read_once() -> None:
    async def go() -> DiffsByMR:
        reader, recording = CodeReader(), DiffsByMR()
        for _ in range(2):
            await reader.diff(cast(Host, recording), _mr(1, "main", "B1"), "OLDHEAD")
        return recording

    assert asyncio.run(go()).calls == [(1, "OLDHEAD")]
