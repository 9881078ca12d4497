"""What the routes share: the repositories' workspaces (one store each, opened once), the
templates, and the lookups every route starts with (a repository by its number on the
index, a review of it). Each repository's reviews live in its own `.livereview/` store, so
a `review wait` in another process sees a click at once (tools/local_review.py)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import markupsafe
import structlog
from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from livereview.app.local_respond import Answering, Responder
from livereview.core.local_model import LocalReview, LocalThread, ThreadKind
from livereview.log_setup import Redactor
from livereview.metrics import Metrics
from livereview.settings import Settings
from livereview.tools import local_review as ops
from livereview.tools.errors import BadInput
from livereview.tools.lessons_queue import LessonQueue
from livereview.web import render

KIND_BADGE = {ThreadKind.EXPLANATION: "💡 explanation", ThreadKind.QUESTION: "❓ question",
              ThreadKind.TODO: "TODO", ThreadKind.FIXME: "FIXME",
              ThreadKind.FINDING: "🔎 finding", ThreadKind.COMMENT: "💬 comment"}


def thread_sig(thread: LocalThread) -> str:
    """Changes when what a thread shows does: the page replaces only threads whose sig moved,
    so a half-written reply elsewhere is kept."""
    shown = [str(thread.resolved), str(thread.line), str(thread.old_line)]
    shown += [f"{m.id}:{' '.join(m.reactions)}" for m in thread.messages]
    return hashlib.sha256("|".join(shown).encode()).hexdigest()[:16]


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def templates() -> Environment:
    env = Environment(loader=PackageLoader("livereview.web", "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True),
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(text=render.text, markdown=render.markdown, kind_badge=KIND_BADGE,
                       sig=thread_sig, when=_when, description=render.description)
    return env


@dataclass
class Site:
    workspaces: list[ops.Workspace]
    answering: Answering | None = None  # the AI that answers people, as `review reply`'s
    queue: LessonQueue | None = None  # the config's lessons: the operator's console
    settings: Settings | None = None  # the config: the rest of the console (DESIGN §11)
    secrets: tuple[str, ...] = ()  # masked in every page, as the log redactor masks them
    metrics: Metrics | None = None  # the daemon's own, when `run` serves the pages
    env: Environment = field(default_factory=templates)
    _responders: dict[str, Responder] = field(default_factory=dict)
    _answering: asyncio.Lock = field(default_factory=asyncio.Lock)
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def answer(self, ws: ops.Workspace, review_id: int) -> None:
        """The AI answers what people said in the review, as after `livereview review
        reply`, but in the background: the click returns at once and the answer reaches the
        page as a change."""
        if self.answering is None or self.answering.ai is None:
            return
        responder = self._responders.setdefault(ws.top, self.answering.bind(ws))
        task = asyncio.create_task(self._answer(responder, review_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _answer(self, responder: Responder, review_id: int) -> None:
        async with self._answering:  # one workflow cycle at a time, as one daemon runs them
            try:
                await responder.answer(review_id)
            except Exception:  # noqa: BLE001 - a task's edge: said in the log, never lost
                structlog.get_logger("livereview.web").warning("answer_failed", exc_info=True)

    def workspace(self, number: int) -> ops.Workspace:
        if not 0 <= number < len(self.workspaces):
            raise ops.LocalReviewError(f"no repository {number}")
        return self.workspaces[number]

    def need_queue(self) -> LessonQueue:
        if self.queue is None:
            raise BadInput("no lessons here: serve with --config naming the daemon's database")
        return self.queue

    async def review(self, request: Request) -> tuple[ops.Workspace, LocalReview]:
        params = request.path_params
        ws = self.workspace(int(params["repo"]))
        return ws, await ops.review_of(ws, int(params["review"]))

    def page(self, request: Request, name: str, context: Mapping[str, object],
             status_code: int = 200) -> HTMLResponse:
        html = self.env.get_template(name).render(
            csrf=request.state.csrf, console=self.queue is not None,
            operator=self.settings is not None, **context)
        return HTMLResponse(self.mask(html), status_code=status_code)

    def mask(self, text: str) -> str:
        """Every configured secret masked, raw or as the template escaped it: a last_error
        may quote a URL with a token in it (DESIGN §11: no token reaches a page)."""
        escaped = [str(markupsafe.escape(s)) for s in self.secrets]
        return str(Redactor([*self.secrets, *escaped]).scrub(text))

    def need_settings(self) -> Settings:
        if self.settings is None:
            raise BadInput("no console here: serve with --config naming the daemon's config")
        return self.settings

    async def close(self) -> None:
        for task in list(self._tasks):
            await task
        for responder in self._responders.values():
            await responder.close()
        for ws in self.workspaces:
            ws.close()
        if self.queue is not None:
            self.queue.close()


def repo_name(top: str) -> str:
    return render.text(Path(top).name or top)
