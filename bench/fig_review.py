"""Figure 11: one review of an MR of 10, 300 and 3 000 files — wall time and peak RSS.

The fake GitLab (served from this process) holds an MR whose every file is new and about
`FILE_BYTES` long, so 3 000 files make a ~50 MB diff; the fake LLM answers each batch after
a fixed `LLM_LATENCY` with one finding per file it is shown for a few files. The review
runs as the real CLI (`livereview review HOST:REPO!IID --json`) in a subprocess, so the
peak resident memory measured (getrusage of that child, via wait4) is the reviewer's own.
The target: memory flat in the number of files, < 200 MB at 3 000 (docs/DESIGN.md §11).

    python bench/fig_review.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import Row

from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.sandbox.llm_server import FakeLLM, FakeLLMServer

TOKEN = "glpat-bench-review-000000"
REPO = "bench/review"
FILE_BYTES = 16_500  # × 3 000 files ≈ 50 MB of diff
LLM_LATENCY = 0.05
TARGET_MIB = 200.0


# The CLI, run so that it writes its own /proc/self/status at exit: VmHWM belongs to the
# process's own memory map, while getrusage's ru_maxrss of a child carries over the RSS of
# the parent it was forked from (Linux keeps the larger across execve, see getrusage(2)),
# which is the whole benchmark suite's when bench/run.py runs this figure.
_REPORT_PEAK = (
    "import atexit, runpy, sys\n"
    "out = sys.argv.pop(1)\n"
    "atexit.register(lambda: open(out, 'w').write(open('/proc/self/status').read()))\n"
    "sys.argv[0] = 'livereview'\n"
    "runpy.run_module('livereview', run_name='__main__', alter_sys=True)\n")


def _vm_hwm_mib(status: Path, usage: resource.struct_rusage) -> float:
    """The child's own peak RSS (VmHWM), or ru_maxrss where /proc said nothing."""
    try:
        for line in status.read_text(encoding="ascii").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return usage.ru_maxrss / 1024


def content(n: int) -> str:
    line = f"value_{n:05d} = compute({n}, 'padding to make a realistic source line')\n"
    return line * (FILE_BYTES // len(line))


def config(path: Path, gitlab: str, llm: str, db: Path) -> None:
    path.write_text("\n".join([
        "[daemon]", f'database_url = "sqlite:///{db}"', 'metrics_listen = ""',
        'log_format = "json"', "", "[ai]", f'base_url = "{llm}"', 'model = "sandbox"',
        'api_key_env = ""', "", "[[hosts]]", 'name = "gl"', 'type = "gitlab"',
        f'url = "{gitlab}"', 'token_env = "BENCH_REVIEW_TOKEN"', "", "[[repos]]",
        'host = "gl"', f'path = "{REPO}"', ""]), encoding="utf-8")


def one(files: int, workdir: Path) -> dict[str, float]:
    gitlab = FakeGitLab(token=TOKEN, rate_limit_per_minute=None)
    gitlab.add_project(REPO)
    iid = gitlab.add_mr(REPO, title=f"{files} files", author="alice",
                        files={f"src/f{n:05d}.py": ("", content(n)) for n in range(files)})
    llm = FakeLLM(delay_seconds=LLM_LATENCY, review_findings={
        f"src/f{n:05d}.py": [{"severity": "warning", "path": f"src/f{n:05d}.py", "line": 1,
                              "side": "new", "body": f"Finding in file {n}"}]
        for n in range(0, files, max(1, files // 5))})
    with FakeGitLabServer(gitlab) as server, FakeLLMServer(llm) as model:
        cfg = workdir / f"review-{files}.toml"
        config(cfg, server.url, model.url, workdir / f"review-{files}.db")
        env = {**os.environ, "BENCH_REVIEW_TOKEN": TOKEN}
        started = time.perf_counter()
        peak_file = workdir / f"review-{files}.status"
        child = subprocess.Popen(  # noqa: S603 - our own CLI
            [sys.executable, "-c", _REPORT_PEAK, str(peak_file), "--config", str(cfg),
             "--log-level", "WARNING", "review", f"gl:{REPO}!{iid}", "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        assert child.stdout is not None
        out = child.stdout.read()
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - started
    result = json.loads(out) if status == 0 else {}
    return {"files": files, "seconds": seconds, "peak_mib": _vm_hwm_mib(peak_file, usage),
            "reviewed": result.get("files_reviewed", -1),
            "findings": len(result.get("findings", [])), "llm_calls": len(llm.prompts),
            "exit": os.waitstatus_to_exitcode(status)}


def run(state_dir: Path, *, quick: bool) -> list[Row]:
    """Figure 11 for bench/run.py: one row per size, and the target on the peak."""
    sizes = (10, 300) if quick else (10, 300, 3000)
    print(f"\n## 11. one review: time and peak RSS by MR size (fake GitLab, fake LLM "
          f"{LLM_LATENCY * 1000:.0f} ms per call, ~{FILE_BYTES / 1000:.1f} kB per file)")
    measured = []
    for files in sizes:
        r = one(files, state_dir)
        measured.append(r)
        print(f"{files} files: {r['seconds']:.1f} s, {r['llm_calls']:.0f} LLM calls, "
              f"{r['findings']:.0f} findings, peak RSS {r['peak_mib']:.0f} MiB, exit "
              f"{r['exit']:.0f}")
    failed = [r for r in measured if r["exit"] != 0]
    peak = max(r["peak_mib"] for r in measured)
    return [Row(f"11. review of {'/'.join(str(s) for s in sizes)} files: wall, peak RSS",
                " / ".join(f"{r['seconds']:.1f} s" for r in measured) + "; "
                + " / ".join(f"{r['peak_mib']:.0f}" for r in measured) + " MiB",
                f"all exit 0, peak < {TARGET_MIB:.0f} MiB", not failed and peak < TARGET_MIB,
                [f"{len(failed)} review(s) failed"] if failed else [])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="10 and 300 files only")
    args = parser.parse_args()
    sizes = (10, 300) if args.quick else (10, 300, 3000)
    print("## 11. one review: time and peak RSS by MR size (fake GitLab, fake LLM "
          f"{LLM_LATENCY * 1000:.0f} ms per call, ~{FILE_BYTES / 1000:.1f} kB per file)\n")
    print("| files | diff MB | review s | LLM calls | findings | peak RSS MiB | exit |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for files in sizes:
            row = one(files, Path(tmp))
            rows.append(row)
            print(f"| {files} | {files * FILE_BYTES / 1e6:.1f} | {row['seconds']:.1f} | "
                  f"{row['llm_calls']:.0f} | {row['findings']:.0f} | {row['peak_mib']:.0f} | "
                  f"{row['exit']:.0f} |", flush=True)
    peak = max(r["peak_mib"] for r in rows)
    print(f"\npeak at {rows[-1]['files']:.0f} files / at {rows[0]['files']:.0f}: "
          f"{rows[-1]['peak_mib'] / rows[0]['peak_mib']:.2f}×; target < {TARGET_MIB:.0f} MiB: "
          f"{'pass' if peak < TARGET_MIB else 'FAIL'}")


if __name__ == "__main__":
    main()
