"""Figure 20: one file of a 3 000-file MR, asked for by its path, on each host's fake.

Before: the old strategy — every file of the diff read, the wanted one kept (what the
tools did before path filters went to the hosts). Now: the host is asked for the file
alone where its API takes paths (Bitbucket Cloud's `path`), and elsewhere reads stop once
it is found (GitLab /diffs, GitHub /files, Data Center /changes; Data Center then reads
that file's diff only). The wanted file is on an early page; a file on the last page costs
GitLab and GitHub every page still (their APIs take no path). Requests and wall time of
the adapter's diff, on loopback with no added latency.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import Row

from livereview.app.hosts import connect
from livereview.core.model import MRKey
from livereview.hosts.base import Host
from livereview.hosts.diffs import PathFilter
from livereview.metrics import Metrics
from livereview.sandbox.bitbucket_cloud.server import FakeBitbucketCloudServer
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.sandbox.github.server import FakeGitHubServer
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.settings import HostSettings, Secret

TOKEN = "bench-onefile-token-0000"
REPO = "acme/widgets"
WANTED = "pkg/f0150.py"


def files(count: int) -> dict[str, tuple[str, str]]:
    return {f"pkg/f{n:04d}.py": ("", f"# file {n}\nx = {n}\n") for n in range(count)}


def gitlab(count: int) -> tuple[Any, str, int]:
    fake = FakeGitLab(token=TOKEN)
    fake.add_project(REPO)
    iid = fake.add_mr(REPO, title="Large", description="", author="bob", files=files(count))
    return FakeGitLabServer(fake).start(), "url", int(iid)


def github(count: int) -> tuple[Any, str, int]:
    fake = FakeGitHub(token=TOKEN)
    fake.add_repo(REPO)
    iid = fake.add_pr(REPO, title="Large", body="", author="bob", files=files(count))
    return FakeGitHubServer(fake).start(), "enterprise_url", int(iid)


def bitbucket_cloud(count: int) -> tuple[Any, str, int]:
    fake = FakeBitbucketCloud(token="unused", bot_login="token-owner",
                              rate_limit_per_hour=10**9)
    fake.add_access_token(TOKEN, "livereview")
    fake.add_user("bob", "Bob")
    fake.add_repo(REPO)
    iid = fake.add_pr(REPO, title="Large", description="", author="bob", files=files(count))
    return FakeBitbucketCloudServer(fake).start(), "api_url", int(iid)


def bitbucket_server(count: int) -> tuple[Any, str, int]:
    fake = FakeBitbucketDC(token=TOKEN)
    fake.add_repo(REPO)
    iid = fake.add_pr(REPO, title="Large", description="", author="bob", files=files(count))
    return FakeBitbucketDCServer(fake).start(), "url", int(iid)


HOSTS: dict[str, Callable[[int], tuple[Any, str, int]]] = {
    "gitlab": gitlab, "github": github, "bitbucket-cloud": bitbucket_cloud,
    "bitbucket-server": bitbucket_server}


Measured = tuple[int, float, bool]  # requests, seconds, the file (alone) was found


async def measure(host: Host, key: MRKey, paths: PathFilter | None) -> Measured:
    before, started = host.requests_sent, time.perf_counter()
    if paths is None:  # the old strategy: every file read, the one kept
        found = [f async for f in host.diff_files(key) if f.change.new_path == WANTED]
    else:
        found = [f async for f in host.diff_files(key, paths=paths)]
    right = [f.change.new_path for f in found] == [WANTED] and "x = 150" in found[0].diff
    return host.requests_sent - before, time.perf_counter() - started, right


def one(kind: str, count: int) -> tuple[Measured, Measured]:
    server, attribute, iid = HOSTS[kind](count)
    try:
        settings = HostSettings(name="h", type=kind, url=str(getattr(server, attribute)),
                                token=Secret(TOKEN),
                                username="livereview" if kind == "bitbucket-cloud" else None)

        async def both() -> tuple[Measured, Measured]:
            host = connect(settings, Metrics())
            try:
                key = MRKey("h", REPO, iid)
                return (await measure(host, key, None),
                        await measure(host, key, PathFilter((WANTED,))))
            finally:
                await host.close()
        return asyncio.run(both())
    finally:
        server.stop()


def run(state: Path | None = None, quick: bool = False) -> list[Row]:
    count = 1000 if quick else 3000
    rows = []
    for kind in HOSTS:
        (old_n, old_s, old_ok), (new_n, new_s, new_ok) = one(kind, count)
        wrong = "" if old_ok and new_ok else " (WRONG FILE)"
        rows.append(Row(
            f"20. one file of a {count:,}-file MR by its path, {kind}",
            f"{new_n} requests, {new_s * 1000:.0f} ms (before: {old_n} requests, "
            f"{old_s * 1000:.0f} ms){wrong}", "< 1/4 of before's requests",
            new_n * 4 < old_n and not wrong))
    for row in rows:
        print(f"{row.figure}: {row.measured}")
    return rows


if __name__ == "__main__":
    run(quick="--quick" in sys.argv)
