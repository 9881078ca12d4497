"""`livereview sandbox`: the four fake hosts and the stand-in model on loopback until a
signal. Ctrl-C exits 130 and SIGTERM 0 (as `livereview demo` stops: a loop signal handler
that ends the wait, then every server is stopped); the temporary folder goes with it unless
`--dir` named one."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from livereview.cli.sandbox import files, local_repo, samples
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.sandbox.llm_server import FakeLLM, FakeLLMServer

READY = "livereview sandbox: ready"
CHATTER = (
    "@livereview does `total` handle an unknown sku?",
    "@livereview would an RLock be safer here?",
    "@livereview what should a test of this change check?",
)


class SandboxError(Exception):
    """The sandbox cannot start as asked (a folder that already holds a database)."""


@dataclass(frozen=True)
class Options:
    folder: Path | None
    chatter_seconds: float | None  # None: no scripted colleague


@contextlib.contextmanager
def _folder(given: Path | None) -> Iterator[Path]:
    if given is None:
        folder = Path(tempfile.mkdtemp(prefix="livereview-sandbox-"))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return
    if given.exists() and not given.is_dir():
        raise SandboxError(f"--dir {given} is not a folder")
    if (given / "livereview.db").exists():  # the fakes start empty: its MRs are gone
        raise SandboxError(f"--dir {given} already holds a sandbox database (livereview.db): "
                           "remove it, or choose another folder")
    yield given


def _print_where(out: TextIO, written: files.Written, served: list[samples.Sample],
                 llm_url: str, keep: bool, repo: Path | str) -> None:
    print(f"Sandbox hosts on loopback, answers from the stand-in model at {llm_url}", file=out)
    for sample in served:
        print(f"  {sample.name:16} {sample.mr_url}", file=out)
    print(f"\nConfig:     {written.config}\nMCP client: {written.mcp}"
          f"{'' if keep else '  (this folder is removed on exit)'}\n\nTry:\n"
          f"  export LIVEREVIEW_CONFIG={written.config}\n"
          "  livereview check && livereview once\n"
          f"  livereview review {served[0].mr_url}\n", file=out)
    if isinstance(repo, Path):
        print(f"Local reviews, in a repository with commits to review ({repo}):\n"
              f"{local_repo.commands(repo)}", file=out)
    else:
        print(f"(no local repository for local reviews: {repo})\n", file=out)


async def _chatter(gitlab: FakeGitLab, sample: samples.Sample, every: float) -> None:
    """A scripted colleague: a new question to the bot on the GitLab sample MR."""
    iid = int(sample.mr_url.rsplit("/", 1)[1])
    count = 0
    while True:
        await asyncio.sleep(every)
        gitlab.add_note(sample.repo, iid, author="alice", body=CHATTER[count % len(CHATTER)])
        count += 1


async def _first_review(config: Path, url: str, out: TextIO) -> None:
    """Findings on a sample MR before anyone asks: `livereview review` itself, run once
    (a subprocess, as a newcomer would type it), so the MR holds the bot's inline findings,
    summary and verdict."""
    review = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "livereview", "--config", str(config), "review", url, "--json",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE)
    _, err = await review.communicate()
    if review.returncode != 0:
        why = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no reason given"]
        print(f"  (the sample review of {url} failed: {why[0][:300]})", file=out)


async def serve(options: Options, out: TextIO) -> int:
    """Serve until SIGINT (130) or SIGTERM (0); raises SandboxError if it cannot start."""
    received: list[int] = []
    stop, loop = asyncio.Event(), asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        received.append(signum)
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal, signum)
    served: list[samples.Sample] = []
    try:
        with _folder(options.folder) as folder, FakeLLMServer(FakeLLM(invent_findings=True)) as llm:
            gitlab, first = samples.gitlab(secrets.token_hex(16))
            served.append(first)
            for make in (samples.github, samples.bitbucket_cloud, samples.bitbucket_dc):
                served.append(make(secrets.token_hex(16)))
            written = files.write(folder, served, llm.url)
            try:
                repo: Path | str = local_repo.create(folder)
            except local_repo.NoRepository as exc:
                repo = str(exc)
            print(f"Reviewing the {served[1].name} sample MR (its findings are samples too)…",
                  file=out, flush=True)
            await _first_review(written.config, served[1].mr_url, out)
            _print_where(out, written, served, llm.url, keep=options.folder is not None,
                         repo=repo)
            chatter = None if options.chatter_seconds is None else asyncio.create_task(
                _chatter(gitlab, first, options.chatter_seconds))
            print(f"{READY} (Ctrl-C to stop)", file=out, flush=True)
            await stop.wait()
            if chatter is not None:
                chatter.cancel()
    finally:
        for sample in served:
            sample.server.stop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
    return 128 + signal.SIGINT if received[0] == signal.SIGINT else 0
