"""The sections about what the bot writes: the answer policy and its context budget
([answers], docs/DESIGN.md §10.1), knowledge beyond one repo ([knowledge]), lessons, and reviews
([review], docs/DESIGN.md §11) — with the validators of the repo keys that use them."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BeforeValidator, Field

from livereview.settings import section_rules
from livereview.settings.errors import Invalid
from livereview.settings.rules import Between, Required, TomlList, one_of
from livereview.settings.section import Section
from livereview.settings.section_rules import (
    REVIEW_EVENTS,
    SEVERITIES,
    http_or_none,
    repo_path,
    review_events,
    severities,
    verdicts,
)

__all__ = ["REVIEW_EVENTS", "SEVERITIES", "AnswerSettings", "GroupKnowledge", "KnowledgeEntries",
           "KnowledgeSettings", "LessonsSettings", "ReviewSettings", "repo_path",
           "review_events"]


def _knowledge(value: object) -> object:
    """Paths and URLs as strings; snippets as inline tables {title = "…", text = "…"}."""
    if not isinstance(value, list):
        return value
    entries: list[str | tuple[str, str]] = []
    for index, item in enumerate(value):
        if isinstance(item, str) and item.strip():
            entries.append(item.strip())
        elif isinstance(item, dict) and set(item) == {"title", "text"} and all(
                isinstance(v, str) and v.strip() for v in item.values()):
            entries.append((item["title"].strip(), item["text"]))
        else:
            raise Invalid('expected a repo path, a URL, or { title = "…", text = "…" }', index)
    return tuple(entries)


# ---- how answers are written (docs/DESIGN.md §10.1), and knowledge beyond one repo ----
class AnswerSettings(Section):
    """The answer policy ([answers], overridden per repo by [repos.answers]) and the context
    budget of one answer."""

    tone: Annotated[str, one_of("concise", "thorough")] = "concise"
    """How the answers are written: `concise` or `thorough`."""
    concede: Annotated[str, one_of("with_evidence", "when_convinced")] = "with_evidence"
    """`with_evidence`: concede only when the code shown or a reference proves the point;
    `when_convinced`: when the model is convinced."""
    languages: Annotated[TomlList[str], AfterValidator(section_rules.languages)] = ()
    """`[]`: answer in the question's language; else the languages to answer in
    (`["English"]`)."""
    max_chars: Annotated[int, Between(100, 60_000)] = 6000
    """The answer is cut there, after a paragraph or a line, with a note;
    `bot.max_reply_chars` still caps."""
    context_budget_tokens: Annotated[int, Between(500, 200_000)] = 8000
    """The prompt's context (4 characters ≈ 1 token); the lowest-priority parts are cut
    first, and every cut is stated."""
    max_files_read: Annotated[int, Between(0, 100)] = 12
    """Files read per answer for the code a question names (0: none)."""
    max_file_kb: Annotated[int, Between(1, 4096)] = 256
    """A bigger file is not read for an answer."""


KnowledgeEntries = Annotated[tuple[str | tuple[str, str], ...], BeforeValidator(_knowledge)]


class GroupKnowledge(Section):
    host: Required
    """The `[[hosts]]` entry (by name) the group is on."""
    path: Annotated[str, AfterValidator(repo_path)]
    """The group: every repo under it (subgroups too) sees these entries."""
    entries: KnowledgeEntries = ()
    """The same forms as `repos[].knowledge`; files are read from the repo being answered
    in."""


class KnowledgeSettings(Section):
    """Knowledge for every repo (`global`) and for the repos of a group; repo paths in it are
    read from the repo being answered in."""

    everywhere: KnowledgeEntries = Field(default=(), alias="global")
    """Knowledge for every repo; the same forms as `repos[].knowledge`."""
    groups: TomlList[GroupKnowledge] = ()
    """Knowledge for the repos under a group (`[[knowledge.groups]]`)."""


class LessonsSettings(Section):
    require_approval: bool = True
    """A lesson the bot learned by conceding waits for `livereview lessons approve`; false:
    it is active at once."""


class ReviewSettings(Section):
    """Reviews (docs/DESIGN.md §11): how findings become a verdict, what the diff reading may cost,
    whom to tell."""

    changes_requested_on: Annotated[TomlList[str], AfterValidator(severities)] = ("critical",)
    """Severities (`critical`, `warning`, `suggestion`) of which any finding requests
    changes."""
    approve: bool = True
    """Approve an MR when nothing is above a suggestion and every file was fully reviewed."""
    max_file_bytes: Annotated[int, Between(1_000, 50_000_000)] = 1_000_000
    """A larger file is skipped and listed in the summary."""
    batch_chars: Annotated[int, Between(1_000, 2_000_000)] = 60_000
    """Diff characters per model call; a review holds one batch in memory."""
    min_confidence: Annotated[float, Between(0, 1)] = 0.0
    """Findings the model itself is less sure of than this (its `confidence`, 0..1) are
    left out and logged; 0 keeps every finding."""
    max_inline_findings: Annotated[int, Between(1, 1000)] = 50
    """More inline findings than this (the least severe first) go to the summary."""
    notify_author: bool = True
    """On changes requested, a comment mentioning the MR's author."""
    notify_on: Annotated[TomlList[str], AfterValidator(verdicts)] = ("changes_requested",)
    """Verdicts (`approved`, `changes_requested`, `commented`) that notify."""
    notify_command: TomlList[str] = ()
    """A command (argv) given the event JSON on stdin."""
    notify_url: Annotated[str, AfterValidator(http_or_none)] = ""
    """An internal URL the event JSON is POSTed to."""
    notify_timeout_seconds: Annotated[float, Between(1, 600)] = 30.0
    """Per notifier."""
    max_attempts: Annotated[int, Between(1, 100)] = 8
    """A review run's attempts before it fails (an unusable model answer is one)."""
    on_review_request: bool = True
    """Adding the bot as a reviewer of an MR (GitLab and Bitbucket reviewers, GitHub's
    requested reviewers) starts a review, once per request: removing and adding it again
    asks again. The requester must be someone a `@livereview review` mention would be
    answered for (not the bot, not an ignored user or another bot)."""
