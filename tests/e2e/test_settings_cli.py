"""The CLI reads the config as each command needs: no token for store-only commands, only
`[ai]` for `demo --llm`, and a broken file is one line and exit 2 whatever is wrong."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.sandbox.llm_server import FakeLLMServer
from tests.e2e.conftest import Sandbox

KEY = "sk-e2e-SECRET-key-4242"


def without_secrets(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """The config names both a host token and an AI key variable; neither is set."""
    sandbox.config.write_text(sandbox.config.read_text().replace(
        'api_key_env = ""', 'api_key_env = "LIVEREVIEW_E2E_KEY"'))
    monkeypatch.delenv("LIVEREVIEW_E2E_TOKEN")
    monkeypatch.delenv("LIVEREVIEW_E2E_KEY", raising=False)


def test_health_needs_no_token(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch,
                               capsys: pytest.CaptureFixture[str]) -> None:
    without_secrets(sandbox, monkeypatch)
    assert main(["--config", str(sandbox.config), "health"]) == 1  # no poll yet, not exit 2
    captured = capsys.readouterr()
    assert "gl: no successful poll yet" in captured.out
    assert "config error" not in captured.err


def test_pending_needs_no_token(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    without_secrets(sandbox, monkeypatch)
    assert main(["--config", str(sandbox.config), "pending"]) == 0
    assert capsys.readouterr().err == ""


def test_commands_that_talk_to_the_host_still_need_the_token(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    without_secrets(sandbox, monkeypatch)
    assert main(["--config", str(sandbox.config), "once"]) == 2
    assert capsys.readouterr().err == ("livereview: config error: hosts[0].token_env: "
                                       "environment variable LIVEREVIEW_E2E_TOKEN is not set\n")


def demo_config(tmp_path: Path, llm_url: str) -> Path:
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[ai]\nbase_url = "{llm_url}"\nmodel = "team-model"\n'
        'api_key_env = "LIVEREVIEW_E2E_KEY"\n\n'
        '[[hosts]]\nname = "gl"\ntype = "gitlab"\nurl = "https://gitlab.example"\n'
        'token_env = "LIVEREVIEW_GITLAB_TOKEN"\n\n[[repos]]\nhost = "gl"\npath = "a/b"\n')
    return config


def test_demo_with_llm_needs_no_gitlab_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("LIVEREVIEW_GITLAB_TOKEN", raising=False)
    monkeypatch.setenv("LIVEREVIEW_E2E_KEY", KEY)
    with FakeLLMServer() as llm:
        assert main(["--config", str(demo_config(tmp_path, llm.url)), "demo", "--llm"]) == 0
        assert f"answers from model team-model at {llm.url}" in capsys.readouterr().out
        assert len(llm.llm.prompts) == 3


def test_demo_with_llm_names_a_missing_key_variable(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("LIVEREVIEW_E2E_KEY", raising=False)
    assert main(["--config", str(demo_config(tmp_path, "http://127.0.0.1:9/v1")),
                 "demo", "--llm"]) == 2
    assert capsys.readouterr().err.startswith(
        "livereview: config error: ai.api_key_env: environment variable LIVEREVIEW_E2E_KEY "
        "is not set")


@pytest.mark.parametrize(("content", "message"), [
    (b"[daemon]\npoll_interval_seconds = 30 # caf\xe9\n", "not UTF-8 text (byte 0xe9 on line 2)"),
    (b"", "no settings in the file"),
    (b"[daemon\n", "invalid TOML"),
    (b"[daemon]\npoll_interval_seconds = 0.0001\n", "daemon.poll_interval_seconds: must be >= 1"),
    (b"[daemon]\npoll_interval_seconds = 99999999999999999999\n",
     "daemon.poll_interval_seconds: must be <= 86400"),
    (b'[hosts]\nname = "gl"\ntoken = "glpat-e2e-SECRET-token-4242"\n',
     "hosts: expected list, got a table"),
    (None, "is a directory"),
])
def test_a_broken_config_is_one_line_and_exit_2(tmp_path: Path, content: bytes | None,
                                                message: str) -> None:
    config = tmp_path / "livereview.toml"
    if content is None:
        config.mkdir()
    else:
        config.write_bytes(content)
    result = subprocess.run(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(config), "check"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "LIVEREVIEW_E2E_TOKEN": "glpat-e2e-SECRET-token-4242"})
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert message in result.stderr
    assert "SECRET" not in result.stderr + result.stdout


# `mr` reads the file without pydantic when it can (settings/light.py); a broken one is still
# the models' own line, whichever section is broken, and their exit code.
@pytest.mark.parametrize(("old", "new"), [
    ('type = "gitlab"', 'type = "gitlab"\nmax_concurrent_requests = 0'),
    ('type = "gitlab"', 'type = "gitlab"\nmax_concurrent_requests = true'),
    ('[[hosts]]', '[review]\nmax_attempts = 0\n\n[[hosts]]'),
    ('[[hosts]]', '[web]\ntrusted_header = "not a header"\n\n[[hosts]]'),
    ('[[repos]]', '[[repos]]\nhost = "nope"\npath = "x/y"\n\n[[repos]]'),
])
def test_mr_says_what_is_wrong_with_a_broken_config_as_every_command_does(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str], old: str, new: str) -> None:
    from livereview.settings import ConfigError, load

    text = sandbox.config.read_text()
    assert old in text
    sandbox.config.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError) as refused:
        load(sandbox.config)
    line = f"livereview: config error: {refused.value}\n"
    assert main(["--config", str(sandbox.config), "check"]) == 2
    assert capsys.readouterr().err == line
    assert main(["--config", str(sandbox.config), "mr", "comments", "gl:acme/api!1"]) == 2
    assert capsys.readouterr() == ("", line)
