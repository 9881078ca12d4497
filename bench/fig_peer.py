"""Figure 19: the peer, side by side — PR-Agent's published GitHub poller and livereview,
at the same time, on one loopback fake GitHub (GHES form, 50 ms per request).

Both run as processes of their own (`python -m pr_agent.servers.github_polling` from its
own virtual environment, bench/peer_install.py; `livereview run`), each with its own bot
account and token, both answering through the stand-in model (sandbox/llm_server.py as
an OpenAI-compatible base URL; litellm with its local cost map). The fake counts each
token's requests. Per size (1 and 20 repos, two quiet PRs each): a warm-up mention each,
answered (both are then up); a window without mentions right after it (requests per
minute, CPU share, RSS: not idle for livereview, whose hot cycle still reads the PR just
answered — figure 2c is its idle cost); then
mention pairs, one pair at a time — `@livereview …` and `@pragent /ask …` in the same
second in the same repository, each on a PR of its own — timed to each bot's 👀 and
answer, observed every 20 ms. Last, both are stopped (SIGTERM), a pair of mentions is
made, both are started again, and each one's answers to it are counted once livereview
has answered and the peer has polled its notifications three times since its restart.
Prints figures, never asserts.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from common import LATENCY, Row, percentile, record, record_times, repo_path
from peer_install import Peer, PeerUnavailable, install

from livereview.core.triggers import replied_to
from livereview.sandbox.github.server import FakeGitHubServer
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.llm_server import FakeLLM, FakeLLMServer
from livereview.sandbox.loopback import Response, Route

LR_TOKEN, PEER_TOKEN = "ghp_bench-livereview-0000", "ghp_bench-pragent-0000"
PEER = "pragent"
TIMEOUT = 180.0  # seconds: a bound on each wait, never a measured figure


class CountingServer(FakeGitHubServer):
    """The fake GitHub, counting requests per token (the fake's own log has no user)."""

    def __init__(self, state: FakeGitHub, *, latency_seconds: float = 0.0) -> None:
        super().__init__(state, latency_seconds=latency_seconds)
        # GET /repos/{owner}/{repo}/languages, which the peer reads before answering and the
        # daemon never does: `{}` is GitHub's answer for a repository it has not classified.
        # https://docs.github.com/en/rest/repos/repos#list-repository-languages
        self.routes.append(Route("GET", re.compile(r"/repos/[^/]+/[^/]+/languages"),
                                 lambda state, request: {}))
        self.counts: Counter[str] = Counter()
        self.notification_polls: Counter[str] = Counter()
        self._count_lock = threading.Lock()

    def _publish(self, url: str) -> None:
        """The URLs in payloads have GHES's form (`…/api/v3/repos/…`), as a GitHub Enterprise
        Server writes them: PyGithub refuses an absolute URL outside its base URL's path."""
        with self.state.lock:
            self.state.api_url, self.state.web_url = f"{url}/api/v3", url

    def dispatch(self, method: str, path: str, query: dict[str, str], raw: bytes,
                 headers: Mapping[str, str]) -> Response:
        token = (headers.get("authorization") or "").rpartition(" ")[2]
        with self._count_lock:
            self.counts[token] += 1
            if path.endswith("/notifications") and method == "GET":
                self.notification_polls[token] += 1
        return super().dispatch(method, path, query, raw, headers)


@dataclass
class Proc:
    name: str
    args: list[str]
    env: dict[str, str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.popen = subprocess.Popen(self.args, env=self.env, stdout=out,  # noqa: S603
                                          stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def stop(self) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()

    def cpu_seconds(self) -> float:
        assert self.popen is not None
        fields = Path(f"/proc/{self.popen.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def memory_mib(self) -> tuple[float, float]:
        """(VmRSS, VmHWM) in MiB."""
        assert self.popen is not None
        status = dict(line.split(":", 1) for line in
                      Path(f"/proc/{self.popen.pid}/status").read_text().splitlines()
                      if ":" in line)
        return (int(status["VmRSS"].split()[0]) / 1024, int(status["VmHWM"].split()[0]) / 1024)


@dataclass
class Result:
    ack: dict[str, list[float]] = field(default_factory=lambda: {"livereview": [], PEER: []})
    answer: dict[str, list[float]] = field(default_factory=lambda: {"livereview": [], PEER: []})
    idle: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    rss: dict[str, tuple[float, float]] = field(default_factory=dict)
    restart: dict[str, int] = field(default_factory=dict)


def wait_for(what: str, ready: Callable[[], bool], procs: list[Proc]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not ready():
        for p in procs:
            if not p.alive():
                raise RuntimeError(f"{p.name} exited while waiting for {what} (see {p.log})")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {TIMEOUT:g} s")
        time.sleep(0.02)


def _eyes(fake: FakeGitHub, repo: str, comment: int, login: str) -> bool:
    with fake.lock:
        found = fake.find_issue_comment(repo, comment)
        return any(r.content == "eyes" and r.user.login == login for r in found.reactions)


def _answers(fake: FakeGitHub, comment: int, login: str, tag: str) -> int:
    """The bot's answers to `comment`: livereview's by its reply marker, the peer's (which
    has none) by the question's text quoted in its answer."""
    bodies = [str(c["body"]) for c in fake.comments_by(login)]
    if login == "livereview":
        return sum(replied_to(b) == f"issuecomment-{comment}" for b in bodies)
    return sum(tag in b for b in bodies)


def _configs(tmp: Path, peer: Peer, api: str, llm: str, repos: list[str]) -> list[Proc]:
    conf = tmp / "livereview.toml"
    conf.write_text(
        f'[daemon]\ndatabase_url = "sqlite:///{tmp / "lr.db"}"\nmetrics_listen = ""\n\n'
        f'[ai]\napi_key_env = ""\nbase_url = "{llm}"\nmodel = "sandbox"\n\n'
        f'[[hosts]]\nname = "gh"\ntype = "github"\nurl = "{api}"\ntoken_env = "BENCH_GH"\n\n'
        + "".join(f'[[repos]]\nhost = "gh"\npath = "{r}"\n\n' for r in repos),
        encoding="utf-8")
    lr_bin = Path(sys.executable).with_name("livereview")
    lr = Proc("livereview", [str(lr_bin), "--config", str(conf), "run"],
              {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "BENCH_GH": LR_TOKEN},
              tmp / "livereview.log")
    peer_env = {
        "PATH": os.environ.get("PATH", ""), "HOME": str(tmp),
        "GITHUB__DEPLOYMENT_TYPE": "user", "GITHUB__USER_TOKEN": PEER_TOKEN,
        "GITHUB__BASE_URL": api, "OPENAI__KEY": "sk-bench", "OPENAI__API_BASE": llm,
        "CONFIG__MODEL": "gpt-4o", "CONFIG__FALLBACK_MODELS": '["gpt-4o"]',
        "CONFIG__PUBLISH_OUTPUT_PROGRESS": "false",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no cost map from the internet
        "TIKTOKEN_CACHE_DIR": str(peer.site / "litellm/llms/tokenizers"),  # bundled BPE
        "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1", "PYTHONUNBUFFERED": "1",
    }
    pr = Proc(PEER, [str(peer.python), "-m", "pr_agent.servers.github_polling"], peer_env,
              tmp / "pr-agent.log")
    return [lr, pr]


def _ask(fake: FakeGitHub, repo: str, label: str) -> dict[str, tuple[int, str]]:
    """One mention of each bot in `repo`: bot → (comment id, text that identifies it).

    Each bot is asked on a PR of its own (livereview #1, the peer #2): a notification's
    `reason` and `latest_comment_url` follow the thread's latest comment, so the other
    bot's quick answer on a shared PR would turn the peer's `mention` into `comment`, which
    its poller skips — a loss that would be the benchmark's doing, not the peer's."""
    lr = fake.add_issue_comment(repo, 1, author="alice", body=f"@livereview {label}: why?")
    tag = f"{label} for the peer"
    pr = fake.add_issue_comment(repo, 2, author="alice", body=f"@{PEER} /ask {tag}")
    return {"livereview": (int(lr["id"]), ""), PEER: (int(pr["id"]), tag)}


def _timed_pair(fake: FakeGitHub, repo: str, label: str, procs: list[Proc], out: Result
                ) -> None:
    asked, written = _ask(fake, repo, label), time.monotonic()
    pending = {(bot, kind) for bot in asked for kind in ("ack", "answer")}
    deadline = written + TIMEOUT
    while pending and time.monotonic() < deadline:
        for bot, kind in list(pending):
            cid, tag = asked[bot]
            done = (_eyes(fake, repo, cid, bot) if kind == "ack"
                    else _answers(fake, cid, bot, tag) > 0)
            if done:
                (out.ack if kind == "ack" else out.answer)[bot].append(
                    time.monotonic() - written)
                pending.discard((bot, kind))
        if not all(p.alive() for p in procs):
            break
        time.sleep(0.02)
    for bot, kind in pending:
        (out.ack if kind == "ack" else out.answer)[bot].append(float("nan"))


def measure(peer: Peer, repos: int, mentions: int, idle_seconds: float, tmp: Path,
            *, restart: bool) -> Result:
    clock_offset = [timedelta(hours=1)]
    fake = FakeGitHub(token=LR_TOKEN, clock=lambda: datetime.now(UTC) - clock_offset[0])
    fake.tokens[PEER_TOKEN] = PEER
    for login in ("alice", "bob", PEER):
        fake.add_user(login)
    names = [repo_path(i) for i in range(repos)]
    for name in names:
        for _ in range(2):
            fake.add_pr(name, title=f"change {name}", author="bob",
                        files={"a.py": ("x = 1\n", "x = 2\n")})
    clock_offset[0] = timedelta(0)
    out = Result()
    with CountingServer(fake, latency_seconds=LATENCY) as server, \
            FakeLLMServer(FakeLLM()) as llm:
        procs = _configs(tmp, peer, server.enterprise_url, llm.url, names)
        lr, pr = procs
        for p in procs:
            p.start()
        try:
            # The peer reads only notifications newer than its own start (`since`): a
            # mention before its first poll would be lost, so the warm-up waits for it.
            wait_for("the peer's first notifications poll",
                     lambda: server.notification_polls[PEER_TOKEN] > 0, procs)
            warm = Result()
            _timed_pair(fake, names[0], f"warm-up {repos}", procs, warm)
            for bot, times in warm.answer.items():
                if times[0] != times[0]:  # NaN: never answered
                    raise RuntimeError(f"{bot} did not answer the warm-up mention "
                                       f"(log: {(lr if bot == 'livereview' else pr).log})")
            before = dict(server.counts)
            cpu0 = {p.name: p.cpu_seconds() for p in procs}
            started = time.monotonic()
            time.sleep(idle_seconds)  # the idle window itself is what is measured
            minutes = (time.monotonic() - started) / 60
            for p, token in ((lr, LR_TOKEN), (pr, PEER_TOKEN)):
                out.idle[p.name] = (server.counts[token] - before.get(token, 0)) / minutes
                out.cpu[p.name] = (p.cpu_seconds() - cpu0[p.name]) / (minutes * 60) * 100
            for i in range(mentions):
                _timed_pair(fake, names[i % repos], f"question {repos}.{i}", procs, out)
            for p in procs:
                out.rss[p.name] = p.memory_mib()
            if restart:
                _restart(fake, server, names[-1], procs, out)
        finally:
            for p in procs:
                p.stop()
    return out


def _restart(fake: FakeGitHub, server: CountingServer, repo: str, procs: list[Proc],
             out: Result) -> None:
    for p in procs:
        p.stop()
    asked = _ask(fake, repo, "asked while down")
    polls = server.notification_polls[PEER_TOKEN]
    for p in procs:
        p.start()
    cid, _ = asked["livereview"]
    wait_for("the restarted peer's first notifications poll",
             lambda: server.notification_polls[PEER_TOKEN] > polls, procs)
    wait_for("livereview's answer to the mention made while it was down",
             lambda: _answers(fake, cid, "livereview", "") > 0, procs)
    wait_for("three notification polls by the restarted peer",
             lambda: server.notification_polls[PEER_TOKEN] >= polls + 3, procs)
    for bot, (comment, tag) in asked.items():
        out.restart[bot] = _answers(fake, comment, bot, tag)


def run(state_dir: Path, *, quick: bool = False) -> list[Row]:
    mentions, idle_seconds = (3, 30.0) if quick else (10, 60.0)
    print(f"\n## 19. The peer, side by side: PR-Agent's GitHub poller and livereview on one "
          f"fake GHES ({LATENCY * 1000:.0f} ms per request), {mentions} mention pairs, "
          f"{idle_seconds:g} s idle windows")
    try:
        peer = install()
    except PeerUnavailable as exc:
        print(f"the peer could not be installed or run: {exc}")
        return [Row("19. the peer (PR-Agent) side by side", f"not run: {exc}")]
    print(f"pr-agent 0.2.4 from PyPI; pins PyPI no longer serves, relaxed: "
          f"{'; '.join(peer.relaxed)}\nthe GHES patch applied to the installed copy:\n"
          f"{peer.diff}")
    rows: list[Row] = []
    results: dict[int, Result] = {}
    for repos in (1, 20):
        tmp = state_dir / f"peer-{repos}"
        tmp.mkdir(parents=True, exist_ok=True)
        try:
            results[repos] = measure(peer, repos, mentions, idle_seconds, tmp,
                                     restart=repos == 20)
        except (RuntimeError, TimeoutError, OSError) as exc:
            print(f"{repos} repos: not measured: {exc}")
            rows.append(Row(f"19. side by side, {repos} repos", f"not measured: {exc}"))
    for repos, r in results.items():
        for bot in ("livereview", PEER):
            print(f"{repos:>3} repos {bot:>10}: after an answer {r.idle[bot]:.1f} req/min, CPU "
                  f"{r.cpu[bot]:.2f} % of a core, RSS {r.rss[bot][0]:.0f} MiB (peak "
                  f"{r.rss[bot][1]:.0f}), 👀 {_fmt(r.ack[bot])}, answer {_fmt(r.answer[bot])}")
            rows.append(Row(f"19. {bot}, {repos} repo{'s' if repos > 1 else ''}: req/min and "
                            "CPU in the window after its first answer (that PR still hot), "
                            "peak RSS",
                            f"{r.idle[bot]:.1f}/min, {r.cpu[bot]:.2f} % CPU, "
                            f"{r.rss[bot][1]:.0f} MiB"))
            rows.append(Row(f"19. {bot}, {repos} repo{'s' if repos > 1 else ''}: 👀 / answer p50",
                            f"{percentile(r.ack[bot], 50):.2f} s / "
                            f"{percentile(r.answer[bot], 50):.2f} s"))
            name = "PR-Agent 0.2.4" if bot == PEER else "livereview"
            record_times(f"GitHub (fig. 19, beside the peer): {name}", r.ack[bot])
            record("idle", f"GitHub, {name} (fig. 19)", [(repos, r.idle[bot])])
        if r.restart:
            for bot, n in r.restart.items():
                print(f"mention made while {bot} was down: {n} answer(s) after its restart")
                rows.append(Row(f"19. {bot}: mention made while it was down",
                                f"{n} answer(s) after restart", "exactly 1" if bot ==
                                "livereview" else "—", n == 1 if bot == "livereview" else None))
    return rows


def _fmt(times: list[float]) -> str:
    return (f"p50 {percentile(times, 50):.2f} s, max {max(times, default=float('nan')):.2f} s"
            if times else "—")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="livereview-peer-") as d:
        for row in run(Path(d), quick="--quick" in sys.argv):
            print(f"{row.figure} | {row.measured} | {row.target} | {row.verdict}")
