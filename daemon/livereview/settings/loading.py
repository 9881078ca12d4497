"""Reading a config: the file → TOML → validated, frozen Settings, or one `ConfigError` line.

Validation runs twice: first without touching secrets, so every mistake in the file is
reported before a missing environment variable, then (if the command needs them) reading the
tokens. Commands that need no secret stop after the first pass.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from livereview.settings.errors import ConfigError, describe
from livereview.settings.file import read
from livereview.settings.models import AISettings, Settings
from livereview.settings.secret import Reading

__all__ = ["load", "load_ai", "parse", "read"]

M = TypeVar("M", bound=BaseModel)


def _validate(model: type[M], data: Mapping[str, object], env: Mapping[str, str],
              secrets: bool) -> M:
    for reading in (Reading(env, secrets=False), Reading(env, secrets=True))[:1 + secrets]:
        try:
            validated = model.model_validate(data, context=reading)
        except ValidationError as exc:
            message = describe(exc)
        else:
            continue
        # Raised outside the `except`: the ValidationError, which holds the raw input and so
        # perhaps a token, is not chained to what the operator sees.
        raise ConfigError(message)
    return validated


def parse(data: Mapping[str, object], env: Mapping[str, str], source: Path | None = None,
          *, secrets: bool = True) -> Settings:
    """Settings from a parsed TOML document. `secrets=False` checks where each secret comes
    from but reads none (the tokens are then empty)."""
    settings = _validate(Settings, data, env, secrets)
    return settings.model_copy(update={"source": source})


def load(path: Path, env: Mapping[str, str] | None = None, *, secrets: bool = True
         ) -> Settings:
    return parse(read(path), dict(os.environ) if env is None else env, path, secrets=secrets)


class _OnlyAI(BaseModel):
    """The `[ai]` section alone; the rest of the file is not the caller's business."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)
    ai: AISettings


def load_ai(path: Path, env: Mapping[str, str] | None = None) -> AISettings:
    """The `[ai]` section and its key, for `demo --llm`: the demo talks to a sandbox host, so
    the file's hosts, repos and their tokens are not read."""
    data = {"ai": read(path).get("ai", {})}
    return _validate(_OnlyAI, data, dict(os.environ) if env is None else env, True).ai
