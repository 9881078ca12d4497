"""Reading a config: the file → TOML → validated, frozen Settings, or one `ConfigError` line.

Validation runs twice: first without touching secrets, so every mistake in the file is
reported before a missing environment variable, then (if the command needs them) reading the
tokens. Commands that need no secret stop after the first pass.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from livereview.settings.errors import ConfigError, describe, plain, redact
from livereview.settings.models import AISettings, Settings
from livereview.settings.secret import Reading

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


def read(path: Path) -> dict[str, object]:
    """The TOML document at `path`; every way of failing is one line."""
    where = plain(str(path))
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such file (create one with `livereview init`)") from None
    except IsADirectoryError:
        raise ConfigError(f"{where}: is a directory, not a config file") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror or type(exc).__name__}"
                          ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} on line "
                          f"{line}); save it as UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        # tomllib names keys it could not place; a key could be a pasted token.
        raise ConfigError(f"{where}: invalid TOML: {redact(str(exc))}") from None
    if not data:
        raise ConfigError(f"{where}: no settings in the file (`livereview init` writes a "
                          "commented example)")
    return data


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
