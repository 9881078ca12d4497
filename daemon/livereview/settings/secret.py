"""Secrets: never in the file, read from an environment variable or a file (systemd
credentials), and never shown by repr, str, logs or tracebacks."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from livereview.settings.errors import Invalid, Rank, looks_like_token, plain

if TYPE_CHECKING:  # pydantic is imported only when a model holding a Secret is built
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


class Secret:
    """A token that never shows itself in repr, str, logs or tracebacks."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('***')"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return bool(self._value)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: type, handler: GetCoreSchemaHandler
                                     ) -> CoreSchema:
        # Only code builds a Secret; a file names where it lives (`token_env`, `token_file`).
        from pydantic_core import core_schema

        return core_schema.is_instance_schema(cls)


@dataclass(frozen=True)
class Reading:
    """The validation context while reading a config: the environment secrets come from, and
    whether to read them at all (`health` and `pending` need no token)."""

    env: Mapping[str, str]
    secrets: bool = True


def variable_name(value: str) -> str:
    """A `*_env` key names a variable; a pasted token is refused without being repeated."""
    if value and (looks_like_token(value) or not _VARIABLE.fullmatch(value)):
        what = "a token" if looks_like_token(value) else "something else"
        raise Invalid(f"expected the name of an environment variable, got {what}")
    return value


def resolve(kind: str, env_name: str, file_name: str, *, both_set: bool, required: bool,
            reading: Reading) -> Secret:
    """The secret named by `<kind>_env` (a variable) or `<kind>_file` (relative paths are read
    from $CREDENTIALS_DIRECTORY, i.e. systemd's LoadCredential=)."""
    env_key, file_key = f"{kind}_env", f"{kind}_file"
    if file_name and both_set:
        raise Invalid(f"set {env_key} or {file_key}, not both", file_key)
    if not file_name and not env_name:
        if required:
            raise Invalid(f"is required (or {file_key})", env_key, rank=Rank.MISSING)
        return Secret("")
    if not reading.secrets:
        return Secret("")
    if file_name:
        return Secret(_usable(_read_file(file_key, file_name, reading.env), file_key,
                              f"the {kind} in {plain(file_name)}"))
    value = reading.env.get(env_name, "")
    if not value:
        hint = ' (for a server that needs no key, set api_key_env = "")' if kind == "api_key" \
            else ""
        raise Invalid(f"environment variable {env_name} is not set{hint}", env_key)
    return Secret(_usable(value, env_key, f"environment variable {env_name}"))


def _usable(value: str, key: str, where: str) -> str:
    """A secret goes into an HTTP header: a line break or another control character there
    would fail every request (or split the header), so it is refused here, without being
    shown."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value) or value != value.strip():
        raise Invalid(f"{where} holds a line break, a control character or surrounding "
                      "spaces (copied with the token?)", key)
    return value


def secret_path(file_name: str, env: Mapping[str, str]) -> Path:
    """Where `<kind>_file` points: a relative name is in $CREDENTIALS_DIRECTORY."""
    path = Path(file_name)
    if not path.is_absolute() and env.get("CREDENTIALS_DIRECTORY"):
        path = Path(env["CREDENTIALS_DIRECTORY"]) / path
    return path


def _read_file(file_key: str, file_name: str, env: Mapping[str, str]) -> str:
    path = secret_path(file_name, env)
    try:
        value = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise Invalid(f"cannot read {plain(str(path))}: {reason}", file_key) from None
    except UnicodeDecodeError:  # before ValueError, which it is
        raise Invalid(f"{plain(str(path))} is not UTF-8 text", file_key) from None
    except ValueError:  # a NUL in the name: no file can have it
        raise Invalid(f"cannot read {plain(str(path))}: not a file name (a NUL character)",
                      file_key) from None
    if not value:
        raise Invalid(f"{plain(str(path))} is empty", file_key)
    return value
