"""`livereview sandbox`: every command the docs show, run as written against a running
sandbox (a subprocess, waited for by its "ready" line), and its two ways to stop."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

READY = "livereview sandbox: ready"
HOSTS = ("gitlab", "github", "bitbucket-cloud", "bitbucket-dc")


@dataclass(frozen=True)
class Box:
    process: subprocess.Popen[str]
    config: Path
    mcp: Path
    urls: dict[str, str]  # host name -> the sample MR's web URL
    said: str  # what it printed up to its ready line


def start(folder: Path | None, tmp: Path, *args: str) -> subprocess.Popen[str]:
    where = ["--dir", str(folder)] if folder else []
    tmp.mkdir(exist_ok=True)
    return subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "sandbox", *where, *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1"})


def until_ready(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    seen = ""
    while READY not in seen:
        line = process.stdout.readline()
        assert line, f"the sandbox ended before it was ready: {seen}"
        seen += line
    return seen


def box_of(process: subprocess.Popen[str]) -> Box:
    out = until_ready(process)
    urls = dict(re.findall(r"^  (\S+) +(http://127\.0\.0\.1:\S+)$", out, re.MULTILINE))
    config = Path(re.findall(r"^Config: +(\S+)$", out, re.MULTILINE)[0])
    mcp = Path(re.findall(r"^MCP client: +(\S+)", out, re.MULTILINE)[0])
    return Box(process, config, mcp, urls, out)


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Box]:
    tmp = tmp_path_factory.mktemp("sandbox")
    process = start(tmp / "box", tmp / "tmp")
    try:
        yield box_of(process)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait()


def cli(box: Box, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", *args], capture_output=True, text=True,
        check=False, env={**os.environ, "LIVEREVIEW_CONFIG": str(box.config)})
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def test_the_sandbox_serves_a_sample_mr_on_each_of_the_four_hosts(box: Box) -> None:
    assert set(box.urls) == set(HOSTS)
    assert "token_file" in box.config.read_text(encoding="utf-8")  # no env var needed
    cli(box, "check")


def test_the_github_sample_mr_already_holds_the_bots_findings(box: Box) -> None:
    shown = cli(box, "mr", "comments", box.urls["github"], "--include-replied").stdout
    assert re.search(r"@livereview \(self\) on shop/checkout\.py:1 ", shown), shown
    # the finding's heading: its severity, then its category (and a confidence under 100 %)
    assert re.search(r"\*\*Warning · \w+\*\*( \(confidence \d+%\))? — Sandbox warning",
                     shown), shown


def test_once_answers_the_open_question_on_every_host(box: Box) -> None:
    done = cli(box, "once")
    answered = {json.loads(line)["host"] for line in done.stderr.splitlines()
                if line.startswith("{") and json.loads(line).get("event") == "replied"}
    assert answered == set(HOSTS)
    conversation = cli(box, "conversation", box.urls["gitlab"]).stdout
    assert "@alice (human) “@livereview is `set_price` safe" in conversation
    assert re.search(r"^  posted +#\d+ \(mention\) attempts=1 → #\d+$", conversation,
                     re.MULTILINE), conversation


@pytest.mark.parametrize("host", ["gitlab", "github"])
def test_a_hosted_review_ends_with_inline_findings_a_summary_and_a_verdict(
        box: Box, host: str) -> None:
    out = cli(box, "review", box.urls[host]).stdout
    assert re.search(r"^verdict: \S+; 2 file\(s\) reviewed", out, re.MULTILINE), out
    assert re.search(r"^  warning +shop/checkout\.py:1 +\[inline\]$", out, re.MULTILINE), out
    assert re.search(r"^  suggestion +shop/prices\.py:4 +\[inline\]$", out, re.MULTILINE), out


@pytest.mark.parametrize("host", HOSTS)
def test_the_agent_tools_read_each_sample_mr(box: Box, host: str) -> None:
    assert "shop/prices.py" in cli(box, "mr", "diffstat", box.urls[host]).stdout
    cli(box, "mr", "comments", box.urls[host])
    cli(box, "mr", "comment", box.urls[host], "--body", "Looks good from here.")


def test_the_local_repository_holds_a_range_to_review_as_printed(box: Box) -> None:
    local = box.said.split("\nLocal reviews, in a repository with commits to review", 1)[1]
    commands = re.findall(r"^  (cd .+|livereview .*?)(?: +#.*)?$", local, re.MULTILINE)
    repo = Path(commands[0].removeprefix("cd "))
    assert repo.parent == box.config.parent and (repo / ".git").is_dir()
    assert commands[1:] == ['livereview review request HEAD~2..HEAD --title "Bulk discounts"',
                            "livereview review show 1", "livereview web"]
    log = subprocess.run(["git", "log", "--format=%s"], cwd=repo,  # noqa: S607
                         capture_output=True, text=True, check=True).stdout
    assert log.splitlines() == ["Test the discounts", "Discounts for bulk orders",
                                "A shop with prices and a cart"]
    done = subprocess.run(
        [sys.executable, "-m", "livereview", "review", "request", "HEAD~2..HEAD", "--title",
         "Bulk discounts", "--json"], cwd=repo, capture_output=True, text=True, check=False,
        env={**os.environ, "LIVEREVIEW_CONFIG": str(box.config)})
    assert done.returncode == 0, done.stderr
    review = json.loads(done.stdout)
    assert [f["path"] for f in review["files"]] == [
        "README.md", "shop/cart.py", "shop/discounts.py", "tests/test_discounts.py"]
    marked = [(t["id"], t["kind"], t["path"]) for t in review["threads"]
              if t["messages"][0]["author_kind"] == "code"]
    assert marked == [(1, "question", "shop/cart.py"), (2, "explanation", "shop/discounts.py"),
                      (3, "todo", "tests/test_discounts.py")]
    # The config's [ai] is the stand-in model: the range gets a whole review too.
    assert any(t["kind"] == "finding" for t in review["threads"]), review["threads"]
    shown = subprocess.run(
        [sys.executable, "-m", "livereview", "review", "show", "1"], cwd=repo,
        capture_output=True, text=True, check=True).stdout
    assert "#2 explanation  shop/discounts.py:1" in shown


def test_lessons_are_listed_from_the_sandbox_database(box: Box) -> None:
    assert cli(box, "lessons", "list").stdout.strip()


def test_the_mcp_client_json_starts_a_server_an_agent_can_use(box: Box) -> None:
    entry = json.loads(box.mcp.read_text(encoding="utf-8"))["mcpServers"]["livereview"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"])

    async def session() -> dict[str, object]:
        async with Client(stdio_client(params)) as client:
            assert "diffstat" in {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool("diffstat", {"mr": box.urls["github"]})
            assert not result.is_error
            assert isinstance(result.structured_content, dict)
            return result.structured_content

    assert "shop/prices.py" in json.dumps(asyncio.run(session()))


def test_run_answers_the_chattering_colleague_then_stops_on_sigterm(tmp_path: Path) -> None:
    chatty = box_of(start(None, tmp_path / "tmp", "--chatter", "--chatter-seconds", "1"))
    daemon = subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(chatty.config), "run"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert daemon.stderr is not None
        on_gitlab: set[str] = set()
        while len(on_gitlab) < 2:  # the seeded question, then one the colleague asked
            line = daemon.stderr.readline()
            assert line, "the daemon ended before answering"
            event = json.loads(line) if line.startswith("{") else {}
            if event.get("event") == "replied" and event.get("host") == "gitlab":
                on_gitlab.add(str(event["message_id"]))
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait() == 0
        chatty.process.send_signal(signal.SIGTERM)
        assert chatty.process.wait() == 0
    assert not chatty.config.parent.exists()  # a temporary folder goes with it


def test_ctrl_c_stops_the_sandbox_with_130_and_keeps_a_named_folder(tmp_path: Path) -> None:
    process = start(tmp_path / "kept", tmp_path / "tmp")
    box = box_of(process)
    process.send_signal(signal.SIGINT)
    assert process.wait() == 130
    assert box.config.exists() and box.mcp.exists()
    (box.config.parent / "livereview.db").write_bytes(b"")  # as a first `once` leaves it
    again = start(tmp_path / "kept", tmp_path / "tmp")
    _, err = again.communicate()
    assert again.returncode == 2  # the fakes start empty: the old database's MRs are gone
    assert err.count("\n") == 1 and "livereview.db" in err and "Traceback" not in err


def test_the_console_serves_the_lessons_of_the_sandbox_database(tmp_path: Path) -> None:
    fresh = box_of(start(None, tmp_path / "tmp"))
    try:
        cli(fresh, "once")  # the daemon creates the database the console reads
        web = subprocess.Popen(  # noqa: S603 - our own CLI
            [sys.executable, "-m", "livereview", "--config", str(fresh.config), "web",
             "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True)
        try:
            assert web.stderr is not None
            line = web.stderr.readline()
            found = re.search(r"serving (http://127\.0\.0\.1:\d+/)", line)
            assert found, line
            url = f"{found.group(1)}lessons"  # http on loopback, matched above
            with urllib.request.urlopen(url, timeout=30) as page:  # noqa: S310
                assert page.status == 200
                assert "lessons" in page.read().decode("utf-8").lower()
        finally:
            web.send_signal(signal.SIGTERM)
            web.wait()
    finally:
        fresh.process.send_signal(signal.SIGTERM)
        assert fresh.process.wait() == 0
