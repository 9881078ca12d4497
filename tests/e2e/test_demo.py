"""`livereview demo`: the README's first command runs the real loop in a sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from livereview.cli import main
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
