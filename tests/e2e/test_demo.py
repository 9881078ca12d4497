"""`livereview demo`: the README's first command runs the real loop in a sandbox."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.sandbox.llm_server import FakeLLMServer


def test_demo_answers_every_scripted_question(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "questions answered: 3 of 3" in out
    assert out.count("👀 livereview acknowledged it") == 3
    assert "poll: " in out  # each poll that found something is shown
    assert "sandbox answer engine" in out  # labelled as not a real model
    assert "time to reply:  median" in out


def test_demo_with_llm_uses_the_configured_model(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITLAB_TOKEN_UNUSED_BY_DEMO", "x" * 20)
    with FakeLLMServer() as llm:
        config = tmp_path / "livereview.toml"
        config.write_text(
            f'[ai]\nbase_url = "{llm.url}"\nmodel = "team-model"\napi_key_env = ""\n\n'
            '[[hosts]]\nname = "gl"\ntype = "gitlab"\nurl = "https://gitlab.example"\n'
            'token_env = "GITLAB_TOKEN_UNUSED_BY_DEMO"\n\n[[repos]]\nhost = "gl"\n'
            'path = "a/b"\n')
        assert main(["--config", str(config), "demo", "--llm"]) == 0
        out = capsys.readouterr().out
        assert f"answers from model team-model at {llm.url}" in out
        assert len(llm.llm.prompts) == 3


def start_demo(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    """`livereview demo` with its temporary folder under tmp_path/tmp, to see it removed."""
    (tmp_path / "tmp").mkdir()
    return subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "demo", *args], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        env={**os.environ, "TMPDIR": str(tmp_path / "tmp"), "PYTHONUNBUFFERED": "1"})


def read_until(process: subprocess.Popen[str], text: str) -> str:
    assert process.stdout is not None
    seen = ""
    while text not in seen:
        line = process.stdout.readline()
        assert line, f"the demo ended before printing {text!r}: {seen}"
        seen += line
    return seen


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_demo_stops_at_once_on_ctrl_c_or_sigterm_and_removes_its_folder(
        tmp_path: Path, signum: int, code: int) -> None:
    """Was: Ctrl-C and SIGTERM were ignored for about four minutes."""
    demo = start_demo(tmp_path)
    try:
        read_until(demo, "alice writes")  # mid-conversation: a question waits for its answer
        demo.send_signal(signum)
        assert demo.wait(timeout=10) == code
        assert demo.stderr is not None
        assert demo.stderr.read().strip() == (
            f"livereview: demo stopped ({signal.Signals(signum).name})")
        assert list((tmp_path / "tmp").iterdir()) == []
    finally:
        if demo.poll() is None:
            demo.kill()


def test_demo_keeps_its_database_when_asked_and_says_where(tmp_path: Path) -> None:
    demo = start_demo(tmp_path, "--keep")
    out, _ = demo.communicate(timeout=120)
    assert demo.returncode == 0
    [kept] = (tmp_path / "tmp").iterdir()
    assert f"The demo's database is kept: {kept / 'livereview.db'}" in out
    assert (kept / "livereview.db").is_file()


def test_demo_with_an_unreachable_model_says_so_at_once(tmp_path: Path) -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/v1"
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[ai]\nbase_url = "{url}"\napi_key_env = ""\n\n[[hosts]]\nname = "gl"\n'
        'type = "gitlab"\nurl = "https://gitlab.example"\ntoken_env = "UNUSED_TOKEN"\n\n'
        '[[repos]]\nhost = "gl"\npath = "a/b"\n')
    result = subprocess.run(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(config), "demo", "--llm"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "UNUSED_TOKEN": "x" * 20})
    assert result.returncode == 1
    assert result.stderr.strip() == (f"livereview: demo --llm: LLM endpoint {url} "
                                     "unreachable: connection refused")
    assert result.stdout == ""  # said before the sandbox started
