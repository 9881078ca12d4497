"""A planted token and API key never show up in logs, errors, the store or the metrics."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import structlog

from livereview import log_setup as logs
from livereview.sandbox.llm_server import LLMFault
from tests.databases import dump
from tests.e2e.conftest import TOKEN, Sandbox

API_KEY = "sk-planted-API-key-0123456789"


def test_token_and_api_key_appear_nowhere(sandbox: Sandbox) -> None:
    sandbox.config.write_text(sandbox.config.read_text().replace(
        'api_key_env = ""', 'api_key_env = "LIVEREVIEW_E2E_KEY"').replace(
        'metrics_listen = ""', 'metrics_listen = ""\nlog_format = "json"'))
    sandbox.note("@livereview is this lock needed?")
    sandbox.llm.llm.faults.append(LLMFault(status=500))
    sandbox.gitlab.inject_fault("GET", r"/merge_requests/\d+/commits$", status=500, times=1)
    env = {**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN, "LIVEREVIEW_E2E_KEY": API_KEY}
    outputs = []
    for command in ("check", "once", "once", "pending"):
        result = subprocess.run(  # noqa: S603 - our own CLI
            [sys.executable, "-m", "livereview", "--log-level", "DEBUG", "--config",
             str(sandbox.config), command], capture_output=True, text=True, env=env,
            timeout=60, check=False)
        outputs.append(result.stdout + result.stderr)
    everything = "\n".join(outputs)
    assert "replied" in everything  # the run did real work
    for secret in (TOKEN, API_KEY):
        assert secret not in everything
        assert secret not in dump(sandbox.db)
        if sandbox.db.parent.exists():  # SQLite: its -wal and -shm files too
            for path in sandbox.db.parent.iterdir():
                assert secret.encode() not in path.read_bytes()
    assert all(TOKEN not in json.dumps(p) and API_KEY not in json.dumps(p)
               for p in sandbox.llm.llm.prompts)


def test_redactor_masks_secrets_in_nested_values_and_exceptions() -> None:
    stream = io.StringIO()
    logs.configure("json", [TOKEN, "short"], stream=stream)
    try:
        raise RuntimeError(f"GET https://x/api?private_token={TOKEN} failed")
    except RuntimeError as exc:
        structlog.get_logger("t").error("boom", error=exc, extra={"nested": [TOKEN]},
                                        exc_info=True)
    line = stream.getvalue()
    assert TOKEN not in line
    assert line.count(logs.REDACTED) >= 2
    assert "short" in line or "boom" in line  # short values are not treated as secrets


def test_mcp_without_a_config_masks_the_models_key_from_the_environment(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: `livereview mcp` with no config read the model's key from OPENAI_API_KEY for
    its local reviews, but the log redactor was never given it."""
    from livereview.cli import commands
    from livereview.mcp import server

    masked: list[tuple[str, ...]] = []
    monkeypatch.setattr(logs, "configure",
                        lambda _format="auto", secrets=(), **_: masked.append(tuple(secrets)))
    monkeypatch.setattr(server, "run_local", lambda: 0)  # the stdio session itself
    monkeypatch.chdir(tmp_path)  # no livereview.toml here
    monkeypatch.delenv("LIVEREVIEW_CONFIG", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setattr(commands, "default_config_path", lambda: tmp_path / "none.toml")
    assert commands.main(["mcp"]) == 0
    assert API_KEY in masked[-1]


def test_a_local_review_with_a_config_masks_every_secret_of_it(tmp_path: Path) -> None:
    from livereview.app.local_respond import Answering
    from livereview.settings import parse

    env = {"T": TOKEN, "T2": "glpat-routed-token-0123456789", "K": API_KEY}
    settings = parse({"hosts": [{"name": "gl", "type": "gitlab", "url": "https://g.example",
                                 "token_env": "T",
                                 "tokens": [{"repos": ["org/*"], "token_env": "T2"}]}],
                      "repos": [{"host": "gl", "path": "a/b"}], "ai": {"api_key_env": "K"},
                      "daemon": {"database_url": f"sqlite:///{tmp_path / 'db'}"}}, env)
    answering = Answering(settings.ai, settings)
    assert set(env.values()) <= set(answering.secrets())
