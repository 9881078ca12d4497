"""What `livereview sandbox` writes into its folder: a ready `livereview.toml`, one token
file per host (so no environment variable is needed), and an MCP client JSON in the
`mcpServers` shape Claude Code (`.mcp.json`) and Cursor (`.cursor/mcp.json`) read."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import tomli_w

from livereview.cli.sandbox.samples import Sample

CONFIG, MCP = "livereview.toml", "mcp.json"


@dataclass(frozen=True)
class Written:
    config: Path
    mcp: Path


def _host(sample: Sample, tokens: Path) -> dict[str, object]:
    token = tokens / sample.name
    token.write_text(sample.token + "\n", encoding="utf-8")
    token.chmod(0o600)
    host: dict[str, object] = {"name": sample.name, "type": sample.type, "url": sample.url,
                               "token_file": str(token), "agent_writes": True}
    if sample.login:
        host["login"] = sample.login
    return host


def config(folder: Path, samples: Sequence[Sample], llm_url: str) -> dict[str, object]:
    tokens = folder / "tokens"
    tokens.mkdir(mode=0o700, exist_ok=True)
    return {
        "daemon": {"database_url": f"sqlite:///{folder / 'livereview.db'}",
                   "hot_poll_interval_seconds": 2, "poll_interval_seconds": 10,
                   "shutdown_grace_seconds": 2, "metrics_listen": ""},
        "ai": {"base_url": llm_url, "model": "sandbox", "api_key_env": ""},
        "hosts": [_host(sample, tokens) for sample in samples],
        "repos": [{"host": sample.name, "path": sample.repo} for sample in samples],
    }


def mcp_client(config_path: Path) -> dict[str, object]:
    """`livereview --config … mcp` as an MCP client starts it, with this interpreter's
    livereview (a venv's `livereview` need not be on the client's PATH)."""
    return {"mcpServers": {"livereview": {
        "command": sys.executable,
        "args": ["-m", "livereview", "--config", str(config_path), "mcp"]}}}


def write(folder: Path, samples: Sequence[Sample], llm_url: str) -> Written:
    folder.mkdir(parents=True, exist_ok=True)
    written = Written(folder / CONFIG, folder / MCP)
    written.config.write_text(tomli_w.dumps(config(folder, samples, llm_url)),
                              encoding="utf-8")
    written.mcp.write_text(json.dumps(mcp_client(written.config), indent=2) + "\n",
                           encoding="utf-8")
    return written
