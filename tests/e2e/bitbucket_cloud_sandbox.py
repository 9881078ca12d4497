"""End-to-end harness for Bitbucket Cloud: the fake on loopback, the fake LLM, and a config
file pointing at both — with an account's API token (Basic, `login`) or an access token
(Bearer, `username` = the token's name)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from livereview.cli.commands import main
from livereview.core.triggers import acked_for, replied_to
from livereview.sandbox.bitbucket_cloud.server import FakeBitbucketCloudServer
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.sandbox.llm_server import FakeLLMServer
from tests.databases import url_for

SECRET = "bbcloud-e2e-SECRET-token-4242"
TOKEN_ENV = "LIVEREVIEW_E2E_BITBUCKET_TOKEN"
REPO = "acme/widgets"
FILES = {"src/cache.py": (
    "import threading\n\ncache = {}\n\n\ndef get(key):\n    return cache.get(key)\n",
    "import threading\n\ncache = {}\nlock = threading.Lock()\n\n\ndef get(key):\n"
    "    with lock:\n        return cache.get(key)\n",
)}


@dataclass
class BitbucketSandbox:
    bitbucket: FakeBitbucketCloud
    server: FakeBitbucketCloudServer
    llm: FakeLLMServer
    config: Path
    db: Path
    number: int
    bot: str

    @property
    def database_url(self) -> str:
        return url_for(self.db)
    started: list[subprocess.Popen[str]] = field(default_factory=list)

    def once(self) -> int:
        return main(["--config", str(self.config), "once"])

    def comment(self, body: str, *, author: str = "alice", **kwargs: Any) -> dict[str, Any]:
        return self.bitbucket.add_comment(REPO, self.number, author=author, body=body, **kwargs)

    def inline(self, body: str, line: int = 9) -> dict[str, Any]:
        return self.comment(body, inline={"path": "src/cache.py", "to": line})

    def thread(self, root: int) -> list[dict[str, Any]]:
        """Every comment under `root`, flattened in the order written."""
        comments = self.bitbucket.comments_by_thread(REPO, self.number, root)
        return sorted(comments, key=lambda c: c["id"])

    def answers_to(self, question: int) -> list[dict[str, Any]]:
        return [c for c in self.bitbucket.comments_by(self.bot)
                if replied_to(c["content"]["raw"]) == str(question)]

    def acks_of(self, question: int) -> list[dict[str, Any]]:
        return [c for c in self.bitbucket.comments_by(self.bot)
                if acked_for(c["content"]["raw"]) == str(question)]

    def daemon(self, log: Path) -> subprocess.Popen[str]:
        env = {**os.environ, TOKEN_ENV: SECRET, "PYTHONUNBUFFERED": "1"}
        process = subprocess.Popen(  # noqa: S603 - our own CLI
            [sys.executable, "-m", "livereview", "--config", str(self.config), "run"],
            stdout=log.open("w", encoding="utf-8"), stderr=subprocess.STDOUT, env=env,
            text=True)
        self.started.append(process)
        return process

    def stop_all(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                process.wait()


def write_config(path: Path, url: str, llm_url: str, db: Path, *, auth: str,
                 **daemon: object) -> None:
    settings = {"hot_poll_interval_seconds": 1, "poll_interval_seconds": 5,
                "metrics_listen": '""', "backfill_hours": 24, **daemon}
    lines = ["[daemon]", f'database_url = "{url_for(db)}"']
    lines += [f"{k} = {v}" for k, v in settings.items()]
    lines += ["", "[ai]", f'base_url = "{llm_url}"', 'model = "sandbox"', 'api_key_env = ""',
              "timeout_seconds = 10", "", "[[hosts]]", 'name = "bb"',
              'type = "bitbucket-cloud"', f'url = "{url}"', f'token_env = "{TOKEN_ENV}"', auth,
              "", "[[repos]]", 'host = "bb"', f'path = "{REPO}"', ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, access_token: bool,
            llm_delay: float = 0.0) -> Iterator[BitbucketSandbox]:
    monkeypatch.setenv(TOKEN_ENV, SECRET)
    fake = FakeBitbucketCloud(token="unused-api-token", bot_login="token-owner")
    if access_token:
        bot = fake.add_access_token(SECRET, "livereview-bot", kind="repo_access_token",
                                    scopes=("pullrequest:write",), repos=(REPO,)).display_name
        auth = 'username = "livereview-bot"'
    else:
        bot = fake.add_user("livereview", "LiveReview").name
        fake.add_api_token(bot, SECRET)
        auth = 'login = "livereview"'
    fake.add_user("alice", "Alice")
    fake.add_user("bob", "Bob")
    number = fake.add_pr(REPO, title="Guard the cache with a lock",
                         description="Concurrent readers saw torn writes.", author="bob",
                         files=FILES)
    with FakeBitbucketCloudServer(fake) as server, FakeLLMServer() as llm:
        llm.llm.delay_seconds = llm_delay
        home = tmp_path / ("token" if access_token else "account")
        home.mkdir()
        config, db = home / "livereview.toml", home / "state" / "lr.db"
        write_config(config, server.api_url, llm.url, db, auth=auth)
        made = BitbucketSandbox(fake, server, llm, config, db, number, bot)
        try:
            yield made
        finally:
            made.stop_all()
