"""The operator's console beyond the lessons (DESIGN §11): the `health` verdict per host and
shard, the work `livereview pending` lists, recent answers with time-to-ack and
time-to-reply, an MR's conversation as `livereview conversation` shows it, and the
effective configuration without its secrets. Each page reads through the operations the CLI
calls (tools/status.py, tools/console.py): no table of its own. GET only: nothing here
writes."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from livereview.core.model import MRKey
from livereview.tools import console, target
from livereview.web.config_view import effective
from livereview.web.site import Site


def mr_ref(key: MRKey) -> str:
    """The `HOST:REPO!IID` reference every command takes (tools/target.py)."""
    return f"{key.host}:{key.repo}!{key.iid}"


def mr_link(key: MRKey) -> str:
    return "/conversation?mr=" + quote(mr_ref(key), safe="")


def took(span: timedelta | None) -> str:
    if span is None:
        return "—"
    seconds = max(0.0, span.total_seconds())
    return f"{seconds:.0f}s" if seconds < 120 else f"{seconds / 60:.1f} min"


def ago(seconds: float | None) -> str:
    return "never" if seconds is None else took(timedelta(seconds=seconds)) + " ago"


FILTERS = {"mr_link": mr_link, "mr_ref": mr_ref, "took": took, "ago": ago}


async def health_page(site: Site, request: Request) -> Response:
    settings = site.need_settings()
    hosts = await asyncio.to_thread(console.health, settings, datetime.now(UTC))
    limits = {} if site.metrics is None else {  # per host type, as the daemon counts them
        h.name: site.metrics.rate_limit_state(h.type) for h in settings.hosts}
    return site.page(request, "health.html", {
        "hosts": hosts, "max_age": console.max_age(settings), "limits": limits,
        "healthy": all(h.healthy for h in hosts)})


async def pending_page(site: Site, request: Request) -> Response:
    work = await asyncio.to_thread(console.pending, site.need_settings())
    return site.page(request, "pending.html", {"work": work})


async def recent_page(site: Site, request: Request) -> Response:
    answers = await asyncio.to_thread(console.recent, site.need_settings())
    return site.page(request, "recent.html", {"answers": answers})


async def conversation_page(site: Site, request: Request) -> Response:
    settings = site.need_settings()
    named = request.query_params.get("mr", "")
    key = target.parse_mr(settings.hosts, named)  # BadInput: the not-found page says why
    graph = await asyncio.to_thread(console.conversation, settings, key)
    actor = {m.id: ("system" if m.system else "bot" if graph.identity
                    and graph.identity.is_me(m.author) else "human")
             for t in graph.snapshot.threads for m in t.messages}
    return site.page(request, "conversation.html", {"graph": graph, "actor": actor,
                                                    "ref": mr_ref(key)})


async def config_page(site: Site, request: Request) -> Response:
    settings = site.need_settings()
    return site.page(request, "config.html", {"rows": effective(settings),
                                              "source": str(settings.source or "")})


async def lessons_export(site: Site, _: Request) -> Response:
    """The lessons as `livereview lessons export --format json` writes them, to download."""
    items = await site.need_queue().export()
    body = site.mask(json.dumps({"lessons": items}, indent=2) + "\n")
    return Response(body, media_type="application/json", headers={
        "Content-Disposition": 'attachment; filename="lessons.json"'})
