"""The effective configuration as the console shows it (DESIGN §11): every key with its
value, except the secrets themselves. A section's `derived` keys are what reading the file
computed — the tokens and API keys — so they are never walked; the keys naming where a
secret lives (`token_env`, `token_file`, `api_key_env` …) are shown, as the file has them."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from livereview.settings import Secret, Settings

Row = tuple[str, str]  # a dotted key, its value as text


def _value(value: object) -> str:
    if isinstance(value, Secret):  # never reached through a model: a defence in depth
        return "(secret)"
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, str) else str(value)


def _walk(prefix: str, value: object) -> list[Row]:
    if isinstance(value, BaseModel):
        derived = getattr(type(value), "derived", {})
        rows: list[Row] = []
        for name in type(value).model_fields:
            if name in derived:
                continue
            rows += _walk(f"{prefix}.{name}" if prefix else name, getattr(value, name))
        return rows
    if isinstance(value, tuple | list) and value and all(
            isinstance(item, BaseModel) for item in value):
        return [row for index, item in enumerate(value)
                for row in _walk(f"{prefix}[{index}]", item)]
    if isinstance(value, tuple | list | frozenset | set):
        return [(prefix, "[" + ", ".join(_value(v) for v in value) + "]")]
    if isinstance(value, dict):
        return [(prefix, "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}")]
    return [(prefix, _value(value))]


def effective(settings: Settings) -> list[Row]:
    """Every setting as a dotted key and its value; no secret's value."""
    return _walk("", settings)
