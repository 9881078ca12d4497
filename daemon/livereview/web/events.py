"""Server-sent events: a review's page is told when the review changed — a person's click in
another tab, an agent's `review update` or reply from another process, the AI's answer —
and fetches its threads again (DESIGN §11: fed by the store, not by timers in templates).

The store is polled cheaply (local_browse.change_mark: one row and one index lookup), the
same way `review wait` polls it; the page sends the mark it was rendered with, so a change
between rendering and connecting is not missed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from livereview.tools import local_browse
from livereview.tools import local_review as ops
from livereview.web.site import Site

POLL_SECONDS = 0.5
KEEPALIVE_POLLS = 30  # a comment line now and then: proxies close silent streams
MAX_MARK = 200


async def _changes(ws: ops.Workspace, review_id: int, since: str,
                   request: Request) -> AsyncIterator[str]:
    last, quiet = since, 0
    while not await request.is_disconnected():
        mark = await local_browse.change_mark(ws, review_id)
        if mark != last:
            last, quiet = mark, 0
            yield f"event: change\ndata: {mark}\n\n"
        else:
            quiet += 1
            if quiet >= KEEPALIVE_POLLS:
                quiet = 0
                yield ": still here\n\n"
        await asyncio.sleep(POLL_SECONDS)


async def review_events(site: Site, request: Request) -> Response:
    ws, review = await site.review(request)
    since = request.query_params.get("since", "")[:MAX_MARK]
    return StreamingResponse(_changes(ws, review.id, since, request),
                             media_type="text/event-stream",
                             headers={"x-accel-buffering": "no"})
