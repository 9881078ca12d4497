"""The AI's side of a local review: the same reply workflow as on a hosted MR (poll, trigger,
ack, context, modes, lessons, exactly once), run in-process over the local host.

Which model answers comes from `--config`'s [ai] section, or, without a config file, from the
environment: LIVEREVIEW_AI_BASE_URL, LIVEREVIEW_AI_MODEL and OPENAI_API_KEY. With none of
them nothing is answered, and the command says so rather than leave a person waiting.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from livereview.app.daemon import App
from livereview.core.local_model import (
    AuthorKind,
    LocalReview,
    NewThread,
    ReviewStatus,
    ThreadKind,
    has_textual_change,
)
from livereview.hosts.local.adapter import LocalHost
from livereview.hosts.local.view import BOT
from livereview.settings import AISettings, ConfigError, Secret, Settings, load
from livereview.tools import local_review as ops

NO_AI = ("no AI settings (no --config, and neither OPENAI_API_KEY nor LIVEREVIEW_AI_BASE_URL "
         "is set): the review's threads get no AI answer")
HOST_NAME = "local"
CLOSED = frozenset({ReviewStatus.APPROVED, ReviewStatus.MERGED})  # the AI reviews neither


@dataclass(frozen=True)
class Answering:
    """What the command line found out about answering, before opening anything."""

    ai: AISettings | None
    settings: Settings | None = None  # the config's bot and daemon settings, if any

    @property
    def note(self) -> str:
        return "" if self.ai is not None else NO_AI

    def secrets(self) -> tuple[str, ...]:
        """What the log redactor masks: the model's key, and every secret of the config."""
        found = [self.ai.api_key.reveal()] if self.ai else []
        found += self.settings.secrets() if self.settings else ()
        return tuple(s for s in found if s)

    def bind(self, ws: ops.Workspace) -> Responder:
        return Responder(self, ws)


def responder(config: Path | None) -> Answering:
    """From `--config` (or $LIVEREVIEW_CONFIG), else from the environment."""
    path = config or (Path(os.environ["LIVEREVIEW_CONFIG"])
                      if os.environ.get("LIVEREVIEW_CONFIG") else None)
    if path is not None:
        try:
            settings = load(path, secrets=True)
        except ConfigError as exc:
            raise ops.LocalReviewError(f"config error: {exc}") from None
        return answering_for(settings)
    return _from_environment()


def answering_for(settings: Settings) -> Answering:
    """The config's model and its bot, lessons and review settings; never its database:
    a local review's state, runs and jobs included, is the repository's own store's."""
    return Answering(settings.ai, settings)


def _from_environment() -> Answering:
    base_url = os.environ.get("LIVEREVIEW_AI_BASE_URL", "")
    key = os.environ.get("OPENAI_API_KEY", "")
    if not base_url and not key:
        return Answering(None)
    fields: dict[str, object] = {"api_key_env": ""}
    if base_url:
        fields["base_url"] = base_url
    if os.environ.get("LIVEREVIEW_AI_MODEL"):
        fields["model"] = os.environ["LIVEREVIEW_AI_MODEL"]
    ai = AISettings.model_validate(fields).model_copy(update={"api_key": Secret(key)})
    return Answering(ai)


class Responder:
    """Runs the workflow for the one review a command names, over an App made at the first
    answer and kept for the next ones (`wait` answers while it waits); `close` ends it.

    Its store is the repository's own, with or without a config (the runs are local review
    state: a daemon on the config never sees them, and cannot fail them for its lack of a
    "local" host). Its local host lists only the named review, and its worker and runner
    take up only that review's jobs and runs, so one command never runs the AI on another;
    only `request` and `update` review (once per head: the run key), the other commands
    only answer, and a closed review is never reviewed again.
    """

    def __init__(self, answering: Answering, ws: ops.Workspace) -> None:
        self.answering, self.ws = answering, ws
        self._app: App | None = None
        self._made_for: tuple[int, bool] | None = None  # (review id, reviews?)
        # (files read, files in the diff) while the AI reviews: a terminal's bar (the CLI)
        self.progress: Callable[[int, int], None] | None = None

    @property
    def note(self) -> str:
        return self.answering.note

    def _settings(self, reviews: bool) -> Settings:
        base = self.answering.settings
        ai = self.answering.ai
        assert ai is not None
        return Settings.model_validate({
            "hosts": [{"name": HOST_NAME, "type": "local", "url": "/"}],
            # The AI review (the review runner, docs/DESIGN.md §11) reviews a new review, and
            # again after update.
            "repos": [{"host": HOST_NAME, "path": self.ws.top,
                       "review_on": ["opened", "push"] if reviews else []}],
            "daemon": {**(base.daemon.model_dump() if base else {}),
                       "database_url": f"sqlite:///{self.ws.store.path}", "metrics_listen": ""},
            "bot": base.bot.model_dump() if base else {},
            "ai": ai,
            "lessons": base.lessons.model_dump() if base else {},
            "review": base.review.model_dump() if base else {},
        })

    async def _once(self, review_id: int, reviews: bool) -> None:
        if self._made_for != (review_id, reviews):
            await self.close()
            app = App.create(self._settings(reviews))
            host = app.hosts[HOST_NAME]
            assert isinstance(host, LocalHost)
            host.only = frozenset({review_id})
            # …and its worker and runner take up only that review's jobs and runs: a retry
            # due on another review waits for a command (or a daemon) about that one.
            app.worker.only = app.reviewer.only = host.key_of(self.ws.top, review_id)
            self._app, self._made_for = app, (review_id, reviews)
        assert self._app is not None
        self._app.reviewer.reader.progress = self.progress
        # One runner per store at a time, across processes: each would otherwise answer the
        # same message and review the same head (a SQLite store's process holds every lease).
        async with self.ws.book.running():
            await self._app.once()

    async def answer(self, review_id: int) -> None:
        """Answer what people said in review `review_id` (one poll, then every job it made),
        as the daemon would; no AI review starts."""
        if self.answering.ai is None:
            return
        await self._once(review_id, reviews=False)

    async def close(self) -> None:
        if self._app is not None:
            await self._app.close()
            self._app, self._made_for = None, None

    async def review(self, review: LocalReview) -> LocalReview:
        """The AI review's findings as threads, its summary and verdict: the poller sees a
        new review (or a new head after `update`) and the review runner reviews it. A
        closed review is not reviewed; one with no textual change gets a note saying there
        is nothing to review, and no verdict."""
        if self.answering.ai is None or review.status in CLOSED:
            return review
        if not has_textual_change(review.files):
            await self._nothing_to_review(review)
        else:
            await self._once(review.id, reviews=True)
        return await ops.review_of(self.ws, review.id)

    async def _nothing_to_review(self, review: LocalReview) -> None:
        body = nothing_to_review(review)
        if any(t.messages and t.messages[0].author_kind is AuthorKind.BOT
               and t.messages[0].body == body for t in review.threads):
            return  # said for this range already
        await self.ws.book.add_thread(review.id, NewThread(
            kind=ThreadKind.COMMENT, path="", line=None, code="", author=BOT.username,
            author_kind=AuthorKind.BOT, body=body))


def nothing_to_review(review: LocalReview) -> str:
    """What the bot says on a review with no textual change (shas only: nothing of a
    person's input is echoed)."""
    head = "the working tree" if review.worktree else review.head_sha[:12]
    return (f"Nothing to review: no textual change between {review.base_sha[:12]} and "
            f"{head}. No verdict; the AI reviews this once it changes text "
            "(`livereview review update`).")
