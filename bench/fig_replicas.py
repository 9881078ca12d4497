"""Figure 13: replicas on one PostgreSQL database (docs/DESIGN.md §12).

    LIVEREVIEW_TEST_POSTGRES_URL=postgresql+psycopg://USER@HOST:PORT/postgres \\
        python bench/fig_replicas.py [--quick] [--mrs N]

(`eval "$(bash .ci/postgres start)"` starts a throw-away server and sets the variable.)

a. time-to-ack: one `livereview run` watching R repos, then two replicas watching 2R repos
   (default settings: 3 s hot interval), mentions one at a time on random repos.
b. takeover: two replicas; one is SIGKILLed and a mention lands on every repo at once;
   the time until the last is acknowledged (target: lease_seconds + one hot interval).
c. first sight of N MRs: two replicas (bench/fig_replicas.py --driver, in subprocesses so
   each one's CPU and peak RSS are its own) run their first cold cycle on one database and
   split the MRs by shard. The fake GitLab answers without added latency (as figure 5).

Everything runs on 127.0.0.1; the fake GitLab is served from this process. Prints figures,
never asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from common import (
    TOKEN,
    TOKEN_ENV,
    BenchGitLab,
    Clock,
    NoLLM,
    Row,
    percentile,
    populate,
    quiet,
    repo_path,
)
from fig_memory import FrozenGitLab
from sqlalchemy import create_engine, text

from livereview.app.daemon import App, now
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.llm_server import FakeLLMServer
from livereview.settings import parse
from livereview.store import leases

ENV = "LIVEREVIEW_TEST_POSTGRES_URL"
HOT = 3.0  # the default hot_poll_interval_seconds
FILES = {"a.py": ("x = 1\n", "x = 2\n")}


# -- databases ---------------------------------------------------------------------------------
def fresh_database(admin_url: str, name: str) -> str:
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


def config(path: Path, gitlab_url: str, llm_url: str, database_url: str, repos: list[str],
           replica: str, **daemon: object) -> Path:
    lines = ["[daemon]", f'database_url = "{database_url}"', 'metrics_listen = ""',
             f'replica = "{replica}"', 'log_format = "json"']
    lines += [f"{k} = {v}" for k, v in daemon.items()]
    lines += ["", "[ai]", f'base_url = "{llm_url}"', 'model = "sandbox"', 'api_key_env = ""',
              "", "[bot]", "max_replies_per_mr_per_hour = 10000",
              "automated_reply_seconds = 0.0", "", "[[hosts]]", 'name = "gl"',
              'type = "gitlab"', f'url = "{gitlab_url}"', f'token_env = "{TOKEN_ENV}"', ""]
    lines += [f'[[repos]]\nhost = "gl"\npath = "{r}"\n' for r in repos]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@contextmanager
def daemons(configs: list[Path], logs: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    env = {**os.environ, TOKEN_ENV: TOKEN}
    procs = []
    for i, cfg in enumerate(configs):
        out = (logs / f"daemon-{cfg.stem}-{i}.log").open("wb")
        procs.append(subprocess.Popen(  # noqa: S603 - our own CLI
            [sys.executable, "-m", "livereview", "--config", str(cfg), "run"],
            stdout=out, stderr=subprocess.STDOUT, env=env))
    try:
        yield procs
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=40)
            except subprocess.TimeoutExpired:
                proc.kill()


def acked(gitlab: BenchGitLab, repo: str, iid: int, note_id: int) -> bool:
    return any(a["user"]["username"] == "livereview"
               for a in gitlab.awards_on(repo, iid, note_id))


def wait_acked(gitlab: BenchGitLab, notes: list[tuple[str, int, int]], limit: float
               ) -> float | None:
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if all(acked(gitlab, *n) for n in notes):
            return time.monotonic() - started
        time.sleep(0.02)
    return None


# -- a. time-to-ack ------------------------------------------------------------------------------
def time_to_ack(admin: str, tmp: Path, repos: int, replicas: int, mentions: int
                ) -> list[float]:
    gitlab = BenchGitLab()
    paths = [repo_path(i) for i in range(repos)]
    mrs = [(p, gitlab.add_mr(p, title="t", author="bob", files=FILES)) for p in paths]
    url = fresh_database(admin, f"bench_ack_{replicas}")
    rng = random.Random(13)
    seconds = []
    with FakeGitLabServer(gitlab) as server, FakeLLMServer() as llm:
        configs = [config(tmp / f"ack-{replicas}-{n}.toml", server.url, llm.url, url, paths, n)
                      for n in "ab"[:replicas]]
        with daemons(configs, tmp):
            warm = [(*mrs[0], gitlab.add_note(mrs[0][0], mrs[0][1], author="alice",
                                                body="@livereview warm up?")["id"])]
            wait_acked(gitlab, warm, 60)
            time.sleep(2 * HOT)  # both replicas hold their shards by now
            for _ in range(mentions):
                repo, iid = rng.choice(mrs)
                note = gitlab.add_note(repo, iid, author="alice", body="@livereview why?")
                took = wait_acked(gitlab, [(repo, iid, note["id"])], 60)
                if took is not None:
                    seconds.append(took)
                time.sleep(rng.uniform(0.5, 1.5))
    return seconds


# -- b. takeover --------------------------------------------------------------------------------
def takeover(admin: str, tmp: Path, repos: int, lease: float) -> float | None:
    gitlab = BenchGitLab()
    paths = [repo_path(i) for i in range(repos)]
    mrs = [(p, gitlab.add_mr(p, title="t", author="bob", files=FILES)) for p in paths]
    url = fresh_database(admin, "bench_takeover")
    with FakeGitLabServer(gitlab) as server, FakeLLMServer() as llm:
        configs = [config(tmp / f"takeover-{n}.toml", server.url, llm.url, url, paths, n,
                          lease_seconds=lease) for n in "ab"]
        with daemons(configs, tmp) as procs:
            warm = [(r, i, gitlab.add_note(r, i, author="alice", body="@livereview hi?")["id"])
                    for r, i in mrs]
            wait_acked(gitlab, warm, 60)
            time.sleep(2 * HOT)
            procs[0].kill()
            procs[0].wait()
            notes = [(r, i, gitlab.add_note(r, i, author="alice", body="@livereview now?")["id"])
                     for r, i in mrs]
            return wait_acked(gitlab, notes, lease + 10 * HOT)


# -- c. first sight, per replica (the driver runs in its own process) ---------------------------
def memory_kib() -> dict[str, int]:
    out: dict[str, int] = {}
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                out[name] = int(value.split()[0])
    return out


async def driver(gitlab_url: str, database_url: str, repos: int, name: str, peers: int
                 ) -> None:
    settings = parse({
        "daemon": {"database_url": database_url, "metrics_listen": "", "replica": name},
        "ai": {"api_key_env": ""},
        "hosts": [{"name": "gl", "type": "gitlab", "url": gitlab_url, "token_env": TOKEN_ENV}],
        "repos": [{"host": "gl", "path": repo_path(i)} for i in range(repos)],
    }, {TOKEN_ENV: TOKEN})
    app = App.create(settings, answerer=NoLLM())
    try:
        await app.leases.heartbeat(now())
        while await app.store.run(leases.live_replicas, now()) < peers:  # noqa: ASYNC110 - start together
            await asyncio.sleep(0.05)
        wall, cpu = time.perf_counter(), time.process_time()
        reports = await app.cycle(cold=True)
        report = next(iter(reports.values()))
        print(json.dumps({"replica": name, "seconds": time.perf_counter() - wall,
                          "cpu_seconds": time.process_time() - cpu,
                          "fetched": report.fetched, "errors": report.errors,
                          **memory_kib()}), flush=True)
    finally:
        await app.close()


def first_sight(admin: str, repos: int, per_repo: int) -> list[dict[str, Any]]:
    clock = Clock()
    clock.rewind(timedelta(hours=1))
    gitlab = FrozenGitLab(clock=clock)
    populate(gitlab, repos, per_repo)
    clock.reset()
    url = fresh_database(admin, "bench_first_sight")
    out = []
    with FakeGitLabServer(gitlab) as server:
        env = {**os.environ, TOKEN_ENV: TOKEN}
        procs = [subprocess.Popen(  # noqa: S603 - our own interpreter and script
            [sys.executable, __file__, "--driver", server.url, url, str(repos), name, "2"],
            stdout=subprocess.PIPE, text=True, env=env) for name in "ab"]
        for proc in procs:
            stdout, _ = proc.communicate()
            out += [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return out


def ack(admin: str, tmp: Path, repos: int, mentions: int) -> None:
    print(f"## 13a. time-to-ack (hot interval {HOT:g} s), {mentions} mentions each")
    one = time_to_ack(admin, tmp, repos, 1, mentions)
    two = time_to_ack(admin, tmp, 2 * repos, 2, mentions)
    for label, values in ((f"1 replica, {repos} repos", one),
                          (f"2 replicas, {2 * repos} repos", two)):
        print(f"  {label}: median {statistics.median(values):.2f} s, "
              f"p95 {percentile(values, 95):.2f} s, max {max(values):.2f} s (n={len(values)})")


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    """Figure 13 a, b and c for bench/run.py (c at 1 000 MRs when quick, else 10 000);
    without a PostgreSQL server, one line that says so. Targets (issue 18): the same
    time-to-ack with two replicas watching twice the repos (p95 within one second of one
    replica's, and within figure 1's 6 s); mentions resumed within lease expiry + one hot
    interval after a SIGKILL; peak RSS per replica < 150 MB at first sight."""
    admin = os.environ.get(ENV)
    print("\n## 13. replicas on one PostgreSQL database")
    if not admin:
        print(f"not run: {ENV} is not set (eval \"$(bash .ci/postgres start)\")")
        return [Row("13. replicas on PostgreSQL", f"not run: {ENV} is not set")]
    repos, mentions, lease = (5, 5, 10.0) if quick else (10, 12, 10.0)
    one = time_to_ack(admin, state_dir, repos, 1, mentions)
    two = time_to_ack(admin, state_dir, 2 * repos, 2, mentions)
    took = takeover(admin, state_dir, repos, lease)
    same = bool(one) and bool(two) and len(two) == mentions and \
        percentile(two, 95) <= min(percentile(one, 95) + 1.0, 6.0)
    rows = [Row(f"13a. time to 👀 p50 / p95, 1 replica × {repos} repos vs 2 × {2 * repos}",
                f"{percentile(one, 50):.2f} / {percentile(one, 95):.2f} s vs "
                f"{percentile(two, 50):.2f} / {percentile(two, 95):.2f} s "
                f"({len(one)} / {len(two)} of {mentions} acked)",
                "2 replicas' p95 ≤ 1 replica's + 1 s and ≤ 6 s, all acked", same)]
    rows.append(Row(f"13b. every repo acknowledged again after a SIGKILL, lease {lease:g} s",
                    "never" if took is None else f"{took:.1f} s", f"≤ {lease + HOT:g} s + 1 s",
                    took is not None and took <= lease + HOT + 1))
    mrs, per_repo = (1_000, 50) if quick else (10_000, 50)
    sight = first_sight(admin, mrs // per_repo, per_repo)
    peak = max((r["VmHWM"] * 1024 / 1e6 for r in sight), default=float("nan"))
    fetched = sum(r["fetched"] for r in sight)
    errors = sum(r["errors"] for r in sight)
    rows.append(Row(f"13c. first sight of {mrs} MRs by 2 replicas: peak RSS per replica",
                    f"{peak:.0f} MB; " + ", ".join(
                        f"{r['replica']}: {r['fetched']} read in {r['seconds']:.1f} s, "
                        f"{r['cpu_seconds']:.1f} s CPU" for r in sight),
                    f"< 150 MB, all {mrs} read once, 0 errors",
                    len(sight) == 2 and peak < 150 and fetched == mrs and errors == 0))
    for row in rows:
        print(f"{row.figure}: {row.measured}")
    return rows


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--mrs", type=int, default=None, help="first sight: MRs (50 per repo)")
    p.add_argument("--parts", default="abc", help="which of a, b, c to run")
    p.add_argument("--driver", nargs=5, metavar=("URL", "DB", "REPOS", "NAME", "PEERS"))
    args = p.parse_args()
    if args.driver:
        quiet()
        gitlab_url, db, repos, name, peers = args.driver
        asyncio.run(driver(gitlab_url, db, int(repos), name, int(peers)))
        return
    admin = os.environ.get(ENV)
    if not admin:
        sys.exit(f"fig_replicas: set {ENV} (eval \"$(bash .ci/postgres start)\")")
    repos, mentions = (5, 5) if args.quick else (10, 12)
    mrs = args.mrs or (1_000 if args.quick else 10_000)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        if "a" in args.parts:
            ack(admin, tmp, repos, mentions)
        if "b" in args.parts:
            lease = 10.0
            print(f"## 13b. takeover: lease_seconds = {lease:g}, hot interval {HOT:g} s")
            took = takeover(admin, tmp, repos, lease)
            verdict = "n/a" if took is None else ("pass" if took <= lease + HOT + 1
                                                  else "FAIL")
            print(f"  every repo acknowledged again "
                  f"{took if took is None else round(took, 2)} s after the kill "
                  f"(target ≤ {lease + HOT:g} s + jitter): {verdict}")
        if "c" not in args.parts:
            return
        per_repo = 50
        print(f"## 13c. first sight of {mrs} MRs ({mrs // per_repo} repos × {per_repo}), "
              "two replicas, fake without added latency")
        for row in first_sight(admin, mrs // per_repo, per_repo):
            print(f"  replica {row['replica']}: fetched {row['fetched']} MRs in "
                  f"{row['seconds']:.1f} s, {row['cpu_seconds']:.1f} s CPU, peak RSS "
                  f"{row['VmHWM'] / 1024:.0f} MiB = {row['VmHWM'] * 1024 / 1e6:.0f} MB "
                  f"(target < 150 MB), errors {row['errors']}")


if __name__ == "__main__":
    main()
