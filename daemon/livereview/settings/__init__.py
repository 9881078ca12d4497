"""`livereview.toml` → frozen, validated Settings.

Every problem is reported as one `ConfigError` line naming the key (`hosts[0].url`) and the
cause, so `livereview check` can print it and exit 2. Secrets are never in the file: tokens
come from environment variables or files (systemd credentials), and never appear in an error.

The models (and pydantic) are imported when a name of theirs is first used: the light
reader of `livereview mr` (settings/light.py) needs neither (docs/getting-started.md, "A CLI
for loops").
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from livereview.settings.errors import ConfigError
from livereview.settings.file import read
from livereview.settings.host_rules import GITHUB_API, HOST_TYPES, SUPPORTED_HOST_TYPES
from livereview.settings.secret import Secret

if TYPE_CHECKING:
    from livereview.settings.answering import AnswerSettings, LessonsSettings, ReviewSettings
    from livereview.settings.daemon import DaemonSettings
    from livereview.settings.hosts import HostSettings
    from livereview.settings.loading import load, load_ai, parse
    from livereview.settings.models import AISettings, BotSettings, RepoSettings, Settings

_LAZY = {
    "AnswerSettings": "answering", "LessonsSettings": "answering", "ReviewSettings": "answering",
    "DaemonSettings": "daemon", "HostSettings": "hosts", "load": "loading", "load_ai": "loading",
    "parse": "loading", "AISettings": "models", "BotSettings": "models",
    "RepoSettings": "models", "Settings": "models",
}


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)


__all__ = [
    "GITHUB_API", "HOST_TYPES", "SUPPORTED_HOST_TYPES", "AISettings", "AnswerSettings",
    "BotSettings",
    "ConfigError", "DaemonSettings", "HostSettings", "LessonsSettings", "RepoSettings",
    "ReviewSettings",
    "Secret", "Settings", "load", "load_ai", "parse", "read",
]
