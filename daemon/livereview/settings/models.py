"""The settings, one frozen pydantic model per TOML section: each default and bound is written
once, on its field. Keys outside a model are refused (`extra="forbid"`), values are checked
strictly (a boolean is not a number, `6.0` is not a count), and every number has a lower and
an upper bound an operator would find sensible.

A model validated with a `Reading` context is being read from a file: the keys it derives
(`token`, `api_key`, `source`) may not be written there, and its secrets are resolved from the
environment. Built in code (tests, the demo), a model takes what it is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, ClassVar, Self

from pydantic import (
    AfterValidator,
    ValidationInfo,
    model_validator,
)

from livereview.settings import section_rules
from livereview.settings.answering import (
    AnswerSettings,
    KnowledgeEntries,
    KnowledgeSettings,
    LessonsSettings,
    ReviewSettings,
    repo_path,
    review_events,
)
from livereview.settings.daemon import DaemonSettings
from livereview.settings.errors import Invalid, shown
from livereview.settings.hosts import (
    HostSettings,
    VariableName,
)
from livereview.settings.rules import (
    Between,
    HttpUrl,
    Required,
    TomlList,
    at_most,
    non_empty_strings,
)
from livereview.settings.secret import Secret
from livereview.settings.section import Section, reading_of
from livereview.settings.view import secrets_of
from livereview.settings.web import WebSettings


class BotSettings(Section):
    mention_aliases: Annotated[TomlList[str], AfterValidator(section_rules.aliases)] = (
        "@livereview",)
    """The mentions that summon the bot: case-insensitive, word-bounded, only in prose (not
    in code, links or quotes)."""
    ack_reaction: Annotated[Required, at_most(64)] | None = None
    """The reaction the bot acknowledges a comment with. Unset, each host's own: `eyes` (👀)
    on GitLab and GitHub, `thinking_face` (🤔) on Bitbucket Data Center, whose picker has no
    👀. A name the host does not offer (GitHub's eight, Data Center's five) is acked with
    `ack_comment` instead; `livereview check` says which it will be."""
    ack_comment: Annotated[Required, at_most(200)] = "👀 Looking into this…"
    """The short reply that acknowledges a comment where no reaction can: the host has none
    (Bitbucket Cloud, Bitbucket Data Center before 7), refuses `ack_reaction`, or the bot
    may not react there. It stays, and the answer follows as its own reply (which notifies
    the asker)."""
    ignore_users: Annotated[TomlList[str], AfterValidator(non_empty_strings)] = (
        "ghost", "*-bot", "*[bot]")
    """Glob patterns of users never answered (their replies are not a human's either)."""
    max_reply_chars: Annotated[int, Between(100, 60_000)] = 6000  # GitHub's cap is 65 536
    """A longer answer is cut, with a note."""
    max_consecutive_replies: Annotated[int, Between(1, 100)] = 5
    """Loop guard: bot replies in a thread without a human in between."""
    max_exchange_replies: Annotated[int, Between(1, 100)] = 10
    """Loop guard: bot replies in a thread to one counterpart while nobody else writes,
    whatever the timing."""
    max_replies_per_thread_per_hour: Annotated[int, Between(1, 1000)] = 12
    """Loop guard: bot replies in one thread in an hour, whoever asks (two bots taking turns
    look like a conversation)."""
    max_replies_per_mr_per_hour: Annotated[int, Between(1, 10_000)] = 30
    """Reply budget per MR."""
    automated_reply_seconds: Annotated[float, Between(0, 600)] = 5.0
    """An answer to the bot faster than this is not a human's."""
    answer_closed_mrs: bool = False
    """Still answer when the MR was merged or closed meanwhile."""
    max_edit_answers: Annotated[int, Between(0, 100)] = 3
    """New answers one question gets when its author edits it to ask something new after
    the bot answered (each marked "Answering the edited question:"); cosmetic edits —
    whitespace, case, punctuation, a typo — get none. 0: edits are never answered again.
    Edits past the cap are counted in `livereview_edit_answers_capped_total`."""


class AISettings(Section):
    derived: ClassVar[dict[str, str]] = {"api_key": "set api_key_env or api_key_file"}
    base_url: HttpUrl = "https://api.openai.com/v1"
    """Any OpenAI-compatible server (OpenAI, vLLM, Ollama, …)."""
    model: Required = "gpt-4o-mini"
    """The model name the endpoint knows."""
    api_key_env: VariableName = "OPENAI_API_KEY"
    """The environment variable holding the API key; "" for a server that needs no key (a
    named variable that is unset is an error)."""
    api_key_file: str = ""
    """Instead of `api_key_env`: a file holding the key; a relative path is read from
    `$CREDENTIALS_DIRECTORY` (systemd credentials)."""
    api_key: Secret = Secret("")
    timeout_seconds: Annotated[float, Between(1, 3600)] = 60.0
    """One model call."""
    max_output_tokens: Annotated[int, Between(16, 65_536)] = 800
    """The most tokens one answer may have."""
    temperature: Annotated[float, Between(0, 2)] = 0.2
    """The sampling temperature."""

    @model_validator(mode="after")
    def _read_key(self, info: ValidationInfo) -> Self:
        reading = reading_of(info)
        if reading is None:
            return self
        key = section_rules.ai_key(self.api_key_env, self.api_key_file, reading=reading,
                                   env_written="api_key_env" in self.model_fields_set)
        return self.model_copy(update={"api_key": key})


class RepoSettings(Section):
    host: Required
    """The `[[hosts]]` entry (by name) the repo is on."""
    path: Annotated[str, AfterValidator(repo_path)]
    """GitLab: `group/subgroup/project`; GitHub: `owner/name`; Bitbucket Cloud:
    `workspace/repository`; Bitbucket Data Center: `PROJECT_KEY/repo-slug`; `local`: a git
    working tree."""
    knowledge: KnowledgeEntries = ()
    """Repo files and globs (`docs/adr/*.md`, read from the target branch), links, and
    `{ title, text }` snippets the answers may cite."""
    answers: AnswerSettings | None = None
    """This repo's `[answers]` keys, over the global ones (`answers = { tone = "thorough" }`)."""
    review_on: Annotated[TomlList[str], AfterValidator(review_events)] = ()
    """`"opened"`: review new MRs; `"push"`: a follow-up review after each push. None by
    default."""


def _at_least_one(kind: str) -> AfterValidator:
    def check(values: tuple[object, ...]) -> tuple[object, ...]:
        section_rules.at_least_one(kind, values)
        return values

    return AfterValidator(check)


SECTIONS = ("daemon", "bot", "ai", "lessons", "answers", "knowledge", "review", "web")


class Settings(Section):
    derived: ClassVar[dict[str, str]] = {"source": "the file's own path is not a setting"}
    # Validated, and so reported, in this order: what to watch first, then how.
    hosts: Annotated[TomlList[HostSettings], _at_least_one("hosts")]
    repos: Annotated[TomlList[RepoSettings], _at_least_one("repos")]
    daemon: DaemonSettings
    bot: BotSettings
    ai: AISettings
    lessons: LessonsSettings = LessonsSettings()
    answers: AnswerSettings = AnswerSettings()
    knowledge: KnowledgeSettings = KnowledgeSettings()
    review: ReviewSettings = ReviewSettings()
    web: WebSettings = WebSettings()
    source: Path | None = None

    @model_validator(mode="before")
    @classmethod
    def _sections_default(cls, data: object, info: ValidationInfo) -> object:
        # A section left out of the file still gets read, with the file's context: its
        # defaults may come from the environment (STATE_DIRECTORY, OPENAI_API_KEY).
        if reading_of(info) and isinstance(data, dict):
            return {**{name: {} for name in SECTIONS}, "hosts": [], "repos": [], **data}
        return data

    @model_validator(mode="after")
    def _references(self) -> Self:
        names = section_rules.references((h.name for h in self.hosts),
                                         ((r.host, r.path) for r in self.repos))
        for index, group in enumerate(self.knowledge.groups):
            if group.host not in names:
                raise Invalid(f"no [[hosts]] named {shown(group.host)}", "knowledge", "groups",
                              index, "host")
        return self

    def host(self, name: str) -> HostSettings:
        return next(h for h in self.hosts if h.name == name)

    def knowledge_sources(self) -> dict[str, tuple[str | tuple[str, str], ...]]:
        """Knowledge entries by scope, as lessons name scopes: `repo:HOST:PATH`,
        `group:HOST:PATH`, `global`."""
        scoped = {f"repo:{r.host}:{r.path}": r.knowledge for r in self.repos if r.knowledge}
        for group in self.knowledge.groups:
            key = f"group:{group.host}:{group.path}"
            scoped[key] = (*scoped.get(key, ()), *group.entries)
        if self.knowledge.everywhere:
            scoped["global"] = self.knowledge.everywhere
        return scoped

    def answers_for(self, host: str, repo: str) -> AnswerSettings:
        """[answers] with the repo's own [repos.answers] keys over it."""
        own = next((r.answers for r in self.repos if r.host == host and r.path == repo), None)
        if own is None:
            return self.answers
        return self.answers.model_copy(update={k: getattr(own, k) for k in own.model_fields_set})

    def repos_of(self, host: str) -> tuple[str, ...]:
        return tuple(r.path for r in self.repos if r.host == host)

    def secrets(self) -> tuple[str, ...]:
        """Every secret this config reads — the hosts' tokens, their `[[hosts.tokens]]`, the
        model's key, the web token: what the log redactor and the web pages mask."""
        return secrets_of(self.hosts, self.ai.api_key, self.web.token)
