"""The sections the light reader knows (settings/light.py), key by key: the same names,
defaults, bounds and rules as the models' (settings/models.py, daemon.py, hosts.py,
answering.py, web.py), which tests/unit/test_settings_light_drift.py holds them to. A section or a
key missing here is one the light reader refuses, leaving the file to the models."""

from __future__ import annotations

from dataclasses import dataclass

from livereview.settings import host_rules, section_rules
from livereview.settings.checks import AtMost, Between, OneOf, http_url, non_empty_strings, required
from livereview.settings.light_keys import (
    WhenText,
    boolean,
    derived,
    integer,
    key,
    number,
    strings,
    text,
    text_or_none,
)
from livereview.settings.repo_globs import check_patterns
from livereview.settings.secret import Secret, variable_name

DAY = 86_400.0
OVERLAP = Between(60, 3600, why="GitLab bumps an MR's updated_at at most once a minute per note")


@dataclass(frozen=True)
class LightDaemon:
    state_dir: str = key("", text)
    database_url: str = key("", text)  # its rule needs state_dir and the environment: light.py
    poll_interval_seconds: float = key(30.0, number, Between(1, DAY).check)
    hot_poll_interval_seconds: float = key(3.0, number, Between(0.1, 3600).check)
    hot_window_seconds: float = key(600.0, number, Between(10, DAY).check)
    active_poll_interval_seconds: float = key(1.0, number, Between(0.1, 3600).check)
    active_window_seconds: float = key(180.0, number, Between(10, DAY).check)
    max_active_mrs: int = key(5, integer, Between(0, 100).check)
    quiet_repo_interval_seconds: float = key(60.0, number, Between(1, DAY).check)
    metrics_listen: str = key("127.0.0.1:9464", text, section_rules.metrics_listen)
    backfill_hours: float = key(24.0, number, Between(0, 720).check)
    watermark_overlap_seconds: float = key(120.0, number, OVERLAP.check)
    max_concurrent_jobs: int = key(4, integer, Between(1, 64).check)
    max_attempts: int = key(6, integer, Between(1, 50).check)
    retry_base_seconds: float = key(5.0, number, Between(0.01, 900).check)
    step_timeout_seconds: float = key(120.0, number, Between(1, 3600).check)
    job_timeout_seconds: float = key(600.0, number, Between(1, 7200).check)
    shutdown_grace_seconds: float = key(30.0, number, Between(1, 40).check)
    busy_timeout_seconds: float = key(10.0, number, Between(0.1, 300).check)
    log_format: str = key("auto", text, OneOf(("auto", "console", "json")).check)
    replica: str = key("", text, section_rules.replica_name)
    lease_seconds: float = key(30.0, number, Between(1, 600).check)


@dataclass(frozen=True)
class LightBot:
    mention_aliases: tuple[str, ...] = key(("@livereview",), strings, section_rules.aliases)
    ack_reaction: str | None = key(None, text_or_none, WhenText((required, AtMost(64).check)))
    ack_comment: str = key("👀 Looking into this…", text, required, AtMost(200).check)
    ignore_users: tuple[str, ...] = key(("ghost", "*-bot", "*[bot]"), strings,
                                        non_empty_strings)
    max_reply_chars: int = key(6000, integer, Between(100, 60_000).check)
    max_consecutive_replies: int = key(5, integer, Between(1, 100).check)
    max_exchange_replies: int = key(10, integer, Between(1, 100).check)
    max_replies_per_thread_per_hour: int = key(12, integer, Between(1, 1000).check)
    max_replies_per_mr_per_hour: int = key(30, integer, Between(1, 10_000).check)
    automated_reply_seconds: float = key(5.0, number, Between(0, 600).check)
    answer_closed_mrs: bool = key(False, boolean)
    max_edit_answers: int = key(3, integer, Between(0, 100).check)


@dataclass(frozen=True)
class LightAI:
    base_url: str = key("https://api.openai.com/v1", text, http_url)
    model: str = key("gpt-4o-mini", text, required)
    api_key_env: str = key("OPENAI_API_KEY", text, variable_name)
    api_key_file: str = key("", text)
    api_key: Secret = derived(Secret(""))  # noqa: RUF009 - a dataclass Field
    timeout_seconds: float = key(60.0, number, Between(1, 3600).check)
    max_output_tokens: int = key(800, integer, Between(16, 65_536).check)
    temperature: float = key(0.2, number, Between(0, 2).check)


@dataclass(frozen=True)
class LightLessons:
    require_approval: bool = key(True, boolean)


@dataclass(frozen=True)
class LightAnswers:
    tone: str = key("concise", text, OneOf(("concise", "thorough")).check)
    concede: str = key("with_evidence", text, OneOf(("with_evidence", "when_convinced")).check)
    languages: tuple[str, ...] = key((), strings, section_rules.languages)
    max_chars: int = key(6000, integer, Between(100, 60_000).check)
    context_budget_tokens: int = key(8000, integer, Between(500, 200_000).check)
    max_files_read: int = key(12, integer, Between(0, 100).check)
    max_file_kb: int = key(256, integer, Between(1, 4096).check)


@dataclass(frozen=True)
class LightReview:
    changes_requested_on: tuple[str, ...] = key(("critical",), strings,
                                                section_rules.severities)
    approve: bool = key(True, boolean)
    max_file_bytes: int = key(1_000_000, integer, Between(1_000, 50_000_000).check)
    batch_chars: int = key(60_000, integer, Between(1_000, 2_000_000).check)
    min_confidence: float = key(0.0, number, Between(0, 1).check)
    max_inline_findings: int = key(50, integer, Between(1, 1000).check)
    notify_author: bool = key(True, boolean)
    notify_on: tuple[str, ...] = key(("changes_requested",), strings, section_rules.verdicts)
    notify_command: tuple[str, ...] = key((), strings)
    notify_url: str = key("", text, section_rules.http_or_none)
    notify_timeout_seconds: float = key(30.0, number, Between(1, 600).check)
    max_attempts: int = key(8, integer, Between(1, 100).check)
    on_review_request: bool = key(True, boolean)


@dataclass(frozen=True)
class LightWeb:
    listen: str = key("", text)
    token_file: str = key("", text)  # its rule reads the secret: light.py
    trusted_header: str = key("", text, section_rules.header_name)
    token: Secret = derived(Secret(""))  # noqa: RUF009 - a dataclass Field


@dataclass(frozen=True)
class LightToken:
    repos: tuple[str, ...] = key((), strings, host_rules.token_patterns, required=True)
    token_env: str = key("", text, variable_name)
    token_file: str = key("", text)
    token: Secret = derived(Secret(""))  # noqa: RUF009 - a dataclass Field


@dataclass(frozen=True)
class LightHost:
    name: str = key("", text, required, required=True)
    type: str = key("", text, required, host_rules.host_type, required=True)
    url: str = key("", text)  # its rule needs the type: light.py
    token_env: str = key("", text, variable_name)
    token_file: str = key("", text)
    token: Secret = derived(Secret(""))  # noqa: RUF009 - a dataclass Field
    ca_bundle: str | None = key(None, text_or_none, host_rules.ca_bundle)
    username: str | None = key(None, text_or_none, host_rules.username)
    login: str | None = key(None, text_or_none, host_rules.login)
    max_concurrent_requests: int = key(4, integer, Between(1, 64).check)
    request_timeout_seconds: float = key(30.0, number, Between(1, 600).check)
    max_response_mb: int = key(32, integer, Between(1, 1024).check)
    list_strategy: str = key("auto", text, OneOf(("auto", "instance", "project")).check)
    agent_writes: bool = key(False, boolean)
    agent_repos: tuple[str, ...] = key((), strings, check_patterns)
    tokens: tuple[LightToken, ...] = derived(())  # the tables: light.py


@dataclass(frozen=True)
class LightRepo:
    host: str = key("", text, required, required=True)
    path: str = key("", text, section_rules.repo_path, required=True)
    review_on: tuple[str, ...] = key((), strings, section_rules.review_events)


# Keys of a model the light reader leaves to it: present in a file, they make it say None.
REFUSED = {
    "LightRepo": frozenset({"knowledge", "answers"}),
    "LightSettings": frozenset({"knowledge", "source"}),
}
