"""The AI's side of a local review: the same reply workflow as on a hosted MR (poll, trigger,
ack, context, modes, lessons, exactly once), run in-process over the local host.

Which model answers comes from `--config`'s [ai] section, or, without a config file, from the
environment: LIVEREVIEW_AI_BASE_URL, LIVEREVIEW_AI_MODEL and OPENAI_API_KEY. With none of
them nothing is answered, and the command says so rather than leave a person waiting.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from livereview.app.daemon import App
from livereview.core.local_model import LocalReview
from livereview.settings import AISettings, ConfigError, Secret, Settings, load
from livereview.tools import local_review as ops

NO_AI = ("no AI settings (no --config, and neither OPENAI_API_KEY nor LIVEREVIEW_AI_BASE_URL "
         "is set): the review's threads get no AI answer")
HOST_NAME = "local"


@dataclass(frozen=True)
class Answering:
    """What the command line found out about answering, before opening anything."""

    database_url: str | None  # the workflow's own store: the config's, else the repository's
    ai: AISettings | None
    settings: Settings | None = None  # the config's bot and daemon settings, if any

    @property
    def note(self) -> str:
        return "" if self.ai is not None else NO_AI

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
    """The config's model, and its database for the workflow's jobs (the reviews stay in
    the repository's own store: a person without the config and an agent or a daemon with
    it see the same reviews)."""
    return Answering(settings.daemon.database_url, settings.ai, settings)


def _from_environment() -> Answering:
    base_url = os.environ.get("LIVEREVIEW_AI_BASE_URL", "")
    key = os.environ.get("OPENAI_API_KEY", "")
    if not base_url and not key:
        return Answering(None, None)
    fields: dict[str, object] = {"api_key_env": ""}
    if base_url:
        fields["base_url"] = base_url
    if os.environ.get("LIVEREVIEW_AI_MODEL"):
        fields["model"] = os.environ["LIVEREVIEW_AI_MODEL"]
    ai = AISettings.model_validate(fields).model_copy(update={"api_key": Secret(key)})
    return Answering(None, ai)


class Responder:
    """Runs the workflow over one App, made at the first answer and kept for the next
    ones (`wait` answers while it waits); `close` ends it."""

    def __init__(self, answering: Answering, ws: ops.Workspace) -> None:
        self.answering, self.ws = answering, ws
        self._app: App | None = None

    @property
    def note(self) -> str:
        return self.answering.note

    def _settings(self) -> Settings:
        base = self.answering.settings
        ai = self.answering.ai
        assert ai is not None
        database = self.answering.database_url or f"sqlite:///{self.ws.store.path}"
        return Settings.model_validate({
            "hosts": [{"name": HOST_NAME, "type": "local", "url": "/"}],
            # The AI review (the review runner, docs/DESIGN.md §11) reviews a new review, and
            # again after update.
            "repos": [{"host": HOST_NAME, "path": self.ws.top, "review_on": ["opened", "push"]}],
            "daemon": {**(base.daemon.model_dump() if base else {}),
                       "database_url": database, "metrics_listen": ""},
            "bot": base.bot.model_dump() if base else {},
            "ai": ai,
            "lessons": base.lessons.model_dump() if base else {},
            "review": base.review.model_dump() if base else {},
        })

    async def answer(self) -> None:
        """Answer what people said in the repository's reviews (one poll, then every job it
        made), as the daemon would."""
        if self.answering.ai is None:
            return
        if self._app is None:
            self._app = App.create(self._settings())
        await self._app.once()

    async def close(self) -> None:
        if self._app is not None:
            await self._app.close()
            self._app = None

    async def review(self, review: LocalReview) -> LocalReview:
        """The AI review's findings as threads, its summary and verdict: the poller sees a
        new review (or a new head after `update`) and the review runner reviews it."""
        if self.answering.ai is None:
            return review
        await self.answer()
        return await ops.review_of(self.ws, review.id)
