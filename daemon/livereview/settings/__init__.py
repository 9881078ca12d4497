"""`livereview.toml` → frozen, validated Settings.

Every problem is reported as one `ConfigError` line naming the key (`hosts[0].url`) and the
cause, so `livereview check` can print it and exit 2. Secrets are never in the file: tokens
come from environment variables or files (systemd credentials), and never appear in an error.
"""

from livereview.settings.answering import AnswerSettings, LessonsSettings, ReviewSettings
from livereview.settings.daemon import DaemonSettings
from livereview.settings.errors import ConfigError
from livereview.settings.hosts import GITHUB_API, HOST_TYPES, SUPPORTED_HOST_TYPES, HostSettings
from livereview.settings.loading import load, load_ai, parse, read
from livereview.settings.models import AISettings, BotSettings, RepoSettings, Settings
from livereview.settings.secret import Secret

__all__ = [
    "GITHUB_API", "HOST_TYPES", "SUPPORTED_HOST_TYPES", "AISettings", "AnswerSettings",
    "BotSettings",
    "ConfigError", "DaemonSettings", "HostSettings", "LessonsSettings", "RepoSettings",
    "ReviewSettings",
    "Secret", "Settings", "load", "load_ai", "parse", "read",
]
