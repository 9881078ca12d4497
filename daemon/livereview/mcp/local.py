"""The local-review MCP tools (docs/DESIGN.md §14): `request_review`, `update_review`,
`show_review`.

The coding agent's side of the loop: it asks for a review of its commits, reads the
threads, comments, waits for the person's feedback (the AI answers the person's replies
meanwhile) and updates the review after new commits. Each call opens the repository's
review store (the same one `livereview review …` uses) and closes it again; the operations
are tools/local_review.py's, this module only shapes arguments and results.
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from livereview.app.local_respond import Answering, answering_for, responder
from livereview.core.local_model import (
    NOTHING_TO_REVIEW,
    RANGE_HELP,
    AuthorKind,
    LocalReview,
    ReviewStatus,
    as_dict,
    has_textual_change,
    message_dict,
    thread_dict,
)
from livereview.hosts.base import HostError
from livereview.settings import Settings
from livereview.store.engine import StoreError
from livereview.tools import local_review as ops
from livereview.tools.errors import ToolError

REPO = Annotated[str, Field(description=(
    "The git repository (any directory inside its working tree); default: the server's "
    "working directory"))]
REVIEW_ID = Annotated[int, Field(description="The review's id, from request_review")]
MAX_WAIT_SECONDS = 3600.0


class LocalReviewTools:
    """One method per tool; a failure is the tool error with the line the CLI would print."""

    def __init__(self, settings: Settings | None) -> None:
        self.settings = settings  # None: no config file, the model from the environment

    def _open(self, repo: str) -> tuple[ops.Workspace, Answering]:
        path = Path(repo or ".")
        answering = (responder(None) if self.settings is None
                     else answering_for(self.settings))
        ws = ops.open_workspace(path)
        return ws, answering

    async def request_review(
            self, title: Annotated[str, Field(description="What the change is, in a line")],
            range: Annotated[str, Field(description=(
                "What to review: " + RANGE_HELP))] = "HEAD",
            description: Annotated[dict[str, Any] | None, Field(description=(
                "Free-form JSON kept with the review (the task, links, …)"))] = None,
            repo: REPO = "") -> dict[str, Any]:
        """Open a review of local commits: every changed file with +/- counts, and a thread
        for each 💡 / ❓ / TODO / FIXME comment in the added lines. Returns the review (its
        id, files, threads); `ai` says whether the AI answers threads, `warning` that the
        range has no textual change (nothing to review)."""
        with _as_tool_errors():
            ws, answering = self._open(repo)
            try:
                review = await ops.request(ws, range, title,
                                           json.dumps(description) if description else "")
                warning = {} if has_textual_change(review.files) else {
                    "warning": NOTHING_TO_REVIEW}
                return {**as_dict(review), "ai": answering.note or "on", **warning}
            finally:
                ws.close()

    async def update_review(
            self, review_id: REVIEW_ID,
            range: Annotated[str | None, Field(description=(
                "Re-review after new commits, the new range: " + RANGE_HELP + " (threads "
                "follow their code, resolved ones stay resolved)"))] = None,
            add_comment: Annotated[str | None, Field(description=(
                "A comment to add, as the agent (a reply when `thread` is given, else a new "
                "thread on `path`:`line`, or on the whole review)"))] = None,
            thread: Annotated[int | None, Field(description=(
                "The thread to reply in: its number within the review (a thread's `id` in "
                "the review's JSON)"))] = None,
            path: Annotated[str | None, Field(description="A changed file to comment on")] = None,
            line: Annotated[int | None, Field(description="Its line (new file)")] = None,
            approve: Annotated[bool, Field(description="Mark the review approved")] = False,
            request_changes: Annotated[bool, Field(description=(
                "Mark the review changes_requested"))] = False,
            wait_for_feedback: Annotated[float, Field(description=(
                "Then wait up to this many seconds for a person's new feedback (replies, "
                "comments, a verdict) and return it; 0: do not wait"), ge=0,
                le=MAX_WAIT_SECONDS)] = 0.0,
            repo: REPO = "") -> dict[str, Any]:
        """Act on a review, in this order: move it to a new range, add a comment, set a
        verdict, wait for feedback. Returns the review and the feedback handed out (each
        person's message once, with its thread's file and line)."""
        with _as_tool_errors():
            if approve and request_changes:
                raise ops.LocalReviewError("approve or request_changes, not both")
            return await self._update(review_id, range, add_comment, thread, path, line,
                                      approve, request_changes, wait_for_feedback, repo)

    async def _update(self, review_id: int, range: str | None,
                      add_comment: str | None, thread: int | None, path: str | None,
                      line: int | None, approve: bool, request_changes: bool,
                      wait_for_feedback: float, repo: str) -> dict[str, Any]:
        ws, answering = self._open(repo)
        responder = answering.bind(ws)
        try:
            if range:
                await ops.update(ws, review_id, range)
            notices: list[str] = []
            if add_comment and thread is not None:
                await ops.reply(ws, review_id, thread, add_comment, AuthorKind.AGENT,
                                notice=notices.append)
            elif add_comment:
                await ops.add_comment(ws, review_id, add_comment, path or "", line,
                                      AuthorKind.AGENT)
            if approve or request_changes:
                await ops.set_status(ws, review_id, ReviewStatus.APPROVED if approve
                                     else ReviewStatus.CHANGES_REQUESTED)
            result: dict[str, Any] = {}
            if wait_for_feedback:
                feedback = await ops.wait(ws, review_id, wait_for_feedback,
                                          between=functools.partial(
                                              responder.answer, review_id))
                numbers = {t.id: t.number
                           for t in (await ops.review_of(ws, review_id)).threads}
                result["feedback"] = [message_dict(m, numbers[m.thread_id])
                                      for m in feedback.messages]
                result["status_changed"] = feedback.status is not None
                result["timed_out"] = feedback.empty
            if notices:
                result["warning"] = " ".join(notices)
            review = await ops.review_of(ws, review_id)
            return {"review": as_dict(review), **result}
        finally:
            await responder.close()
            ws.close()

    async def show_review(self, review_id: REVIEW_ID, repo: REPO = "") -> dict[str, Any]:
        """The review: files with their +/- counts, threads with their messages, and the
        code around each thread's line (`context`: [line number, text] pairs)."""
        with _as_tool_errors():
            ws, _ = self._open(repo)
            try:
                return await _with_code(ws, await ops.review_of(ws, review_id))
            finally:
                ws.close()


@contextlib.contextmanager
def _as_tool_errors() -> Iterator[None]:
    # The SDK loads only when the server runs: every other command starts faster without it.
    from mcp.server.mcpserver.exceptions import ToolError as McpToolError
    try:
        yield
    except (ToolError, HostError, StoreError, OSError) as exc:
        raise McpToolError(str(exc)) from exc
    except Exception as exc:  # a bug: one line for the agent, as the CLI says it
        raise McpToolError(f"internal error: {type(exc).__name__}: {exc} (a bug, please "
                           "report it)") from exc


async def _with_code(ws: ops.Workspace, review: LocalReview) -> dict[str, Any]:
    files: dict[str, list[str]] = {}
    threads = [{**thread_dict(thread), "context": [
        list(pair) for pair in await ops.code_around(ws.host, review, thread, files=files)]}
        for thread in review.threads]
    return {**as_dict(review), "threads": threads}


NAMES = ("request_review", "update_review", "show_review")
