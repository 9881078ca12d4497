"""The real CLI (`once`, `check`) against the fake Bitbucket Data Center and the fake LLM:
what people see on the pull request, on a server with reactions and on one without."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from livereview.cli.commands import main
from livereview.core.triggers import acked_for, replied_to
from livereview.hosts.bitbucket_server.payloads import incoming
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.sandbox.llm_server import FakeLLMServer
from tests.databases import url_for
from tests.e2e.conftest import retries_due

TOKEN = "BBDC-e2e-SECRET-token-4242"
REPO = "ACME/widgets"
FILES = {"src/cache.py": (
    "import threading\n\ncache = {}\n\n\ndef get(key):\n    return cache.get(key)\n",
    "import threading\n\ncache = {}\nlock = threading.Lock()\n\n\ndef get(key):\n"
    "    with lock:\n        return cache.get(key)\n",
)}


@dataclass
class BitbucketSandbox:
    fake: FakeBitbucketDC
    server: FakeBitbucketDCServer
    llm: FakeLLMServer
    config: Path
    db: Path
    pr: int

    @property
    def database_url(self) -> str:
        return url_for(self.db)

    def once(self) -> int:
        return main(["--config", str(self.config), "once"])

    def comment(self, text: str, author: str = "alice", **anchor: Any) -> dict[str, Any]:
        return self.fake.add_comment(REPO, self.pr, author=author, text=text, **anchor)

    def inline(self, text: str, line: int = 9) -> dict[str, Any]:
        return self.comment(text, path="src/cache.py", line=line)

    def replies_to(self, comment_id: object) -> list[dict[str, Any]]:
        return [c for c in self.fake.comments_by("livereview")
                if replied_to(incoming(str(c["text"]))) == str(comment_id)]

    def acks_for(self, comment_id: object) -> list[dict[str, Any]]:
        return [c for c in self.fake.comments_by("livereview")
                if acked_for(incoming(str(c["text"]))) == str(comment_id)]

    def thread(self, comment_id: object) -> list[dict[str, Any]]:
        return self.fake.thread_of(REPO, self.pr, int(str(comment_id)))


def write_config(path: Path, url: str, llm_url: str, db: Path, **daemon: object) -> None:
    settings = {"hot_poll_interval_seconds": 1, "poll_interval_seconds": 5,
                "metrics_listen": '""', "backfill_hours": 24, **daemon}
    lines = ["[daemon]", f'database_url = "{url_for(db)}"']
    lines += [f"{k} = {v}" for k, v in settings.items()]
    lines += ["", "[ai]", f'base_url = "{llm_url}"', 'model = "sandbox"', 'api_key_env = ""',
              "timeout_seconds = 10", "", "[[hosts]]", 'name = "bbs"',
              'type = "bitbucket-server"', f'url = "{url}"',
              'token_env = "LIVEREVIEW_E2E_BITBUCKET_TOKEN"', "",
              "[[repos]]", 'host = "bbs"', f'path = "{REPO}"', ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def _sandbox(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, reactions: bool
             ) -> Iterator[BitbucketSandbox]:
    monkeypatch.setenv("LIVEREVIEW_E2E_BITBUCKET_TOKEN", TOKEN)
    fake = FakeBitbucketDC(token=TOKEN, reactions=reactions)
    fake.add_user("alice", "Alice")
    pr = fake.add_pr(REPO, title="Guard the cache with a lock", author="bob",
                     description="Concurrent readers saw torn writes.", files=FILES)
    home = tmp_path / ("new" if reactions else "old")
    home.mkdir()
    with FakeBitbucketDCServer(fake) as server, FakeLLMServer() as llm:
        config, db = home / "livereview.toml", home / "state" / "lr.db"
        write_config(config, server.url, llm.url, db)
        yield BitbucketSandbox(fake, server, llm, config, db, pr)


@pytest.fixture
def bbs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BitbucketSandbox]:
    yield from _sandbox(tmp_path, monkeypatch, reactions=True)


@pytest.fixture
def old_bbs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[BitbucketSandbox]:
    """A Bitbucket Server 6: comments have likes, not reactions."""
    yield from _sandbox(tmp_path, monkeypatch, reactions=False)


def test_a_mention_on_a_line_gets_a_thinking_face_and_a_reply_in_its_thread(
        bbs: BitbucketSandbox) -> None:
    question = bbs.inline("@livereview why hold the lock for a read?")
    assert bbs.once() == 0
    assert bbs.fake.reactions_on(REPO, bbs.pr, question["id"]) == [("thinking_face", "livereview")]
    [reply] = bbs.replies_to(question["id"])
    assert [c["id"] for c in bbs.thread(question["id"])] == [question["id"], reply["id"]]
    assert "sandbox answer engine" in reply["text"]
    # Bitbucket escapes HTML: the hidden marker travels as a link definition, which
    # renders as nothing, instead of an HTML comment people would read.
    assert "<!--" not in reply["text"]
    assert reply["text"].endswith(f"\n[//]: # (livereview:reply-to={question['id']})")
    prompt = bbs.llm.llm.prompts[0][-1]["content"]
    assert "Guard the cache with a lock" in prompt and "file: src/cache.py, line 9" in prompt
    assert re.search(r">>\s+9 \+\s+return cache.get\(key\)", prompt), prompt


def test_a_general_mention_is_answered_once_across_restarts(bbs: BitbucketSandbox) -> None:
    question = bbs.comment("@livereview is this lock needed?")
    assert bbs.once() == 0
    assert bbs.once() == 0
    [reply] = bbs.replies_to(question["id"])
    assert bbs.thread(question["id"])[-1]["id"] == reply["id"]  # nested under the question
    assert len(bbs.fake.comments_by("livereview")) == 1
    assert len(bbs.llm.llm.prompts) == 1


def test_a_reply_in_the_bots_thread_without_a_mention_is_answered(
        bbs: BitbucketSandbox) -> None:
    question = bbs.inline("@livereview why hold the lock for a read?")
    assert bbs.once() == 0
    follow_up = bbs.comment("But reads are atomic in CPython, no?", parent=question["id"])
    assert bbs.once() == 0
    [answer] = bbs.replies_to(follow_up["id"])
    assert answer["id"] in [c["id"] for c in bbs.thread(question["id"])]
    assert "you (livereview)" in bbs.llm.llm.prompts[-1][-1]["content"]
    assert len(bbs.fake.comments_by("livereview")) == 2


def test_the_bot_never_answers_itself_or_a_service_account(bbs: BitbucketSandbox) -> None:
    bbs.fake.add_user("deploy-token", "Deploy token", service=True)
    bbs.comment("@livereview please review the release notes.", author="deploy-token")
    bbs.comment("Note to self: @livereview was here.", author="livereview")
    assert bbs.once() == 0
    assert len(bbs.fake.comments_by("livereview")) == 1  # its own note only
    assert bbs.llm.llm.prompts == []


def test_a_rate_limited_reply_is_waited_out(bbs: BitbucketSandbox) -> None:
    question = bbs.inline("@livereview why hold the lock for a read?")
    bbs.fake.too_many_requests("POST", r"/pull-requests/\d+/comments$", retry_after=1)
    started = time.monotonic()
    assert bbs.once() == 0
    assert time.monotonic() - started >= 0.9
    assert len(bbs.replies_to(question["id"])) == 1
    posts = [r for r in bbs.fake.requests if r[0] == "POST" and r[1].endswith("/comments")]
    assert len(posts) == 2


def test_a_reply_posted_but_lost_is_adopted_not_posted_again(
        bbs: BitbucketSandbox, tmp_path: Path) -> None:
    write_config(bbs.config, bbs.server.url, bbs.llm.url, bbs.db, retry_base_seconds=0.05)
    question = bbs.comment("@livereview is this lock needed?")
    bbs.fake.inject_fault("POST", r"/pull-requests/\d+/comments$", status=0,
                          after_handling=True)
    bbs.once()
    assert len(bbs.replies_to(question["id"])) == 1  # it did reach Bitbucket
    retries_due(bbs.db)
    assert bbs.once() == 0
    assert len(bbs.replies_to(question["id"])) == 1
    assert len(bbs.llm.llm.prompts) == 1


def test_without_reactions_a_short_reply_acks_then_the_answer_follows(
        old_bbs: BitbucketSandbox) -> None:
    question = old_bbs.inline("@livereview why hold the lock for a read?")
    assert old_bbs.once() == 0
    assert old_bbs.once() == 0
    [ack] = old_bbs.acks_for(question["id"])
    [answer] = old_bbs.replies_to(question["id"])
    assert [c["id"] for c in old_bbs.thread(question["id"])] == [
        question["id"], ack["id"], answer["id"]]
    assert ack["text"].startswith("👀 Looking into this…")
    assert not any("/comment-likes/" in path for _, path, _ in old_bbs.fake.requests)


def test_check_shows_the_identity_and_whether_reactions_exist(
        bbs: BitbucketSandbox, old_bbs: BitbucketSandbox,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert bbs.server.url != old_bbs.server.url
    assert main(["--config", str(bbs.config), "check"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"identity +ok +@livereview \(id \d+\)", out), out
    assert re.search(r"acks +ok +.thinking_face. as a reaction on the comment", out), out
    assert re.search(r"ACME/widgets +ok", out), out
    assert re.search(r"listing +ok +per repo: one request per cycle for each of 1 ", out), out
    assert main(["--config", str(old_bbs.config), "check"]) == 0
    assert re.search(r"acks +ok +with a short reply: this host has no comment reactions",
                     capsys.readouterr().out)


def test_check_with_a_rejected_token_names_the_permissions(
        bbs: BitbucketSandbox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_BITBUCKET_TOKEN", "not-the-token")
    assert main(["--config", str(bbs.config), "check"]) == 1
    out = capsys.readouterr().out
    assert "token rejected (401)" in out and "repository write" in out
    assert "not-the-token" not in out
