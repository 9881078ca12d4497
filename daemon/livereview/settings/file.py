"""A config file → its TOML document, or one `ConfigError` line. No pydantic: the light
reader of `livereview mr` (settings/light.py) reads the file with it too."""

from __future__ import annotations

import tomllib
from pathlib import Path

from livereview.settings.errors import ConfigError, plain, redact


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
