"""Figure 17: what one CLI command costs to start, beside `python -c pass`.

Coding agents call `livereview` in loops and a container's health check runs every minute:
each command imports only what it uses (docs/getting-started.md, "A CLI for loops";
tests/e2e/test_cli_imports.py pins the modules). Each command runs N times as a fresh
process; printed: the median wall time, CPU time (user + system) and peak RSS of the
process (os.wait4's rusage: that child alone). `mr comments` meets a refused connection
(port 9), so its figure is start-up plus a failed connect and its retries; `mr comments
(served)` reads one MR's comment from the loopback GitLab fake: the call an agent makes.

    .venv/bin/python bench/fig_startup.py [--runs N] [--pythonpath DIR]

`--pythonpath` measures another checkout's `daemon/` (e.g. `git archive` of main) with
the same interpreter: a before/after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import TOKEN, Row

from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab

# Issue 26: a command an agent runs in a loop starts well under half a second, in about
# 40 MB (CPU, not wall: the figure runs on a shared machine).
CPU_TARGET_MS, RSS_TARGET_MB = 500, 40

CONFIG = """[daemon]
database_url = "sqlite:///{db}"

[ai]
base_url = "http://127.0.0.1:9"
model = "m"
api_key_env = ""

[[hosts]]
name = "gl"
type = "gitlab"
url = "{gitlab}"
token_env = "BENCH_TOKEN"

[[repos]]
host = "gl"
path = "acme/api"
"""


# The peak RSS is the child's own VmHWM, read as it exits: rusage's ru_maxrss would be this
# benchmark's own (Linux carries the high-water mark of the forked parent across exec).
PEAK = """
import atexit, runpy, sys
def peak(path=sys.argv[1]):
    status = open("/proc/self/status", encoding="ascii").read()
    kb = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
    open(path, "w", encoding="ascii").write(kb)
atexit.register(peak)
sys.argv = sys.argv[2:]
if sys.argv[0] == "-m":
    sys.argv = ["livereview", *sys.argv[2:]]
    runpy.run_module("livereview", run_name="__main__", alter_sys=True)
"""


def _sample(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak RSS in MB of one run of `argv` (`-m livereview
    …` or `-c pass`)."""
    with tempfile.NamedTemporaryFile(prefix="livereview-bench-peak-") as peak:
        started = time.perf_counter()
        process = subprocess.Popen(  # noqa: S603
            [sys.executable, "-c", PEAK, peak.name, *argv], cwd=cwd, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _pid, _status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = 0  # reaped by wait4: Popen must not wait for it again
        return wall, usage.ru_utime + usage.ru_stime, int(Path(peak.name).read_text()) / 1024


def _served() -> tuple[FakeGitLab, int]:
    """acme/api with one MR and one comment on it to read."""
    gitlab = FakeGitLab(token=TOKEN)
    gitlab.add_user("alice", "Alice")
    gitlab.add_project("acme/api")
    iid = gitlab.add_mr("acme/api", title="Guard the cache", author="bob",
                        files={"a.py": ("x = 1\n", "x = 2\n")})
    gitlab.add_note("acme/api", iid, author="alice", body="Is a lock needed for a read?")
    return gitlab, iid


def _setup(work: Path, env: dict[str, str]) -> tuple[Path, Path]:
    """A config with its database, and a git repository holding one local review."""
    config = work / "livereview.toml"
    config.write_text(CONFIG.format(db=work / "state.db", gitlab="http://127.0.0.1:9"),
                      encoding="utf-8")
    repo = work / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.test"]
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "base"]):
        subprocess.run([*git, *args], cwd=repo, check=True, env=env)  # noqa: S603
    (repo / "a.py").write_text("x = 1  # TODO: a name\n", encoding="utf-8")
    for argv in (["--config", str(config), "db", "migrate", "--create", "--url",
                  f"sqlite:///{work / 'state.db'}"],
                 ["review", "request", "HEAD", "--title", "bench"]):
        subprocess.run([sys.executable, "-m", "livereview", *argv], cwd=repo, env=env,  # noqa: S603
                       check=True, capture_output=True)
    return config, repo


def _row(name: str, samples: list[tuple[float, float, float]], runs: int) -> Row:
    wall = statistics.median(s[0] for s in samples)
    cpu = statistics.median(s[1] for s in samples)
    rss = statistics.median(s[2] for s in samples)
    measured = f"{wall * 1000:.0f} ms wall, {cpu * 1000:.0f} ms CPU, {rss:.0f} MB peak RSS"
    print(f"17 start-up {name}: {measured} (median of {runs})", flush=True)
    baseline = name.startswith("python")
    return Row(f"17 start-up: {name}", measured,
               "—" if baseline else f"< {CPU_TARGET_MS} ms CPU, ≤ {RSS_TARGET_MB} MB",
               None if baseline else cpu * 1000 < CPU_TARGET_MS and rss <= RSS_TARGET_MB)


def run(*, quick: bool = False, runs: int | None = None, pythonpath: str = "") -> list[Row]:
    runs = runs or (3 if quick else 9)
    env = {k: v for k, v in os.environ.items()
           if k not in ("LIVEREVIEW_CONFIG", "OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL")}
    env |= {"BENCH_TOKEN": TOKEN, "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.test",
            "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.test"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    rows = []
    gitlab, iid = _served()
    with (tempfile.TemporaryDirectory(prefix="livereview-bench-startup-") as tmp,
          FakeGitLabServer(gitlab) as server):
        config, repo = _setup(Path(tmp), env)
        served = Path(tmp) / "served.toml"
        served.write_text(CONFIG.format(db=Path(tmp) / "state.db", gitlab=server.url),
                          encoding="utf-8")
        cli = ["-m", "livereview"]
        read = [*cli, "--config", str(served), "mr", "comments", f"gl:acme/api!{iid}"]
        subprocess.run([sys.executable, *read], cwd=repo, env=env,  # noqa: S603
                       check=True, capture_output=True)  # it reads the comment: exit 0
        cases = [
            ("python -c pass", ["-c", "pass"]),
            ("--version", [*cli, "--version"]),
            ("--help", [*cli, "--help"]),
            ("health", [*cli, "--config", str(config), "health"]),
            ("pending", [*cli, "--config", str(config), "pending"]),
            ("review list", [*cli, "review", "list"]),
            ("review show 1", [*cli, "review", "show", "1"]),
            ("mr comments", [*cli, "--config", str(config), "mr", "comments",
                             "gl:acme/api!1"]),
            ("mr comments (served)", read),
        ]
        for name, argv in cases:
            rows.append(_row(name, [_sample(argv, repo, env) for _ in range(runs)], runs))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--pythonpath", default="",
                        help="measure the livereview under this directory instead")
    args = parser.parse_args()
    run(runs=args.runs, pythonpath=args.pythonpath)
    return 0


if __name__ == "__main__":
    sys.exit(main())
