"""A large MR through the tools: the diff is streamed one file at a time and the diffstat
never holds the whole diff — peak memory stays a small fraction of the diff's size."""

from __future__ import annotations

import asyncio
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from livereview.settings import load
from livereview.tools import diffs
from livereview.tools.toolbox import Toolbox
from tests.contract.tools_side import HOSTS, ToolSide, sides

FILES = 1000  # ten pages of files on every host: memory holds one
LINE = "x = 'a line of about sixty characters, repeated to weigh'\n"
BODY = LINE * 40  # ~2.4 kB a file: ~2.4 MB of diff in all


def open_large(side: ToolSide) -> int:
    files = {f"pkg/f{n:04d}.py": ("", f"# file {n}\n" + BODY) for n in range(FILES)}
    fake: Any = side.driver.fake
    if hasattr(fake, "add_mr"):
        return int(fake.add_mr(side.driver.repo, title="Large", author="bob", files=files))
    if type(side.driver).__name__ == "GitHubDriver":
        return int(fake.add_pr(side.driver.repo, title="Large", body="", author="bob",
                               files=files))
    return int(fake.add_pr(side.driver.repo, title="Large", description="", author="bob",
                           files=files))


# The fake serves from threads of this process: what it allocates (any allocation with a
# sandbox or HTTP-server frame on its stack) is not the tools' memory.
NOT_OURS = [tracemalloc.Filter(False, pattern, all_frames=True)
            for pattern in ("*/livereview/sandbox/*", "*/socketserver.py", "*/http/server.py",
                            "*/tracemalloc.py")]


def held() -> int:
    """Bytes the tools' side holds now (sampled between files, so the sum of what is kept,
    not a transient parse)."""
    return sum(s.size for s in tracemalloc.take_snapshot().filter_traces(NOT_OURS).statistics(
        "filename"))


async def _held(side: ToolSide, iid: int) -> tuple[int, list[int], int]:
    """The diff's size, what was held every 200 files while streaming it, and what the
    diffstat's answer holds."""
    box = Toolbox.open(load(side.config))
    mr = f"{side.driver.name}:{side.driver.repo}!{iid}"
    samples: list[int] = []
    try:
        tracemalloc.start(12)
        base = held()
        seen = size = 0
        async for item in diffs.diff_stream(box, mr):
            seen += 1
            size += len(item.diff)
            if seen % 200 == 0:
                samples.append(held() - base)
        stat = await diffs.diffstat(box, mr, ["pkg/f00*"])
        stat_held = held() - base
        assert seen == FILES and stat.files_total == FILES and len(stat.files) == 100
        return size, samples, stat_held
    finally:
        tracemalloc.stop()
        await box.close()


@pytest.mark.parametrize("host", HOSTS)
def test_a_large_mr_is_read_in_bounded_memory(host: str, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    with sides(host, tmp_path, monkeypatch) as side:
        iid = open_large(side)
        size, samples, stat_held = asyncio.run(_held(side, iid))
        assert size > 2_000_000 and len(samples) == FILES // 200
        assert max(samples) < size / 3, (samples, size)  # never the whole diff
        assert samples[-1] < samples[0] + size / 10, samples  # nor growing with it
        assert stat_held < size / 5, (stat_held, size)
