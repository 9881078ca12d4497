"""The GET routes: they read, never write (DESIGN §11). The index of every repository's
reviews; a review's page (its files listed, no diff yet: a 3 000-file review is one short
page); one file's diff with its threads, loaded when the person opens the file; the threads
and status alone, which the page fetches when the review changed."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from livereview.core.local_model import LocalReview, LocalThread
from livereview.tools import local_browse
from livereview.web import render
from livereview.web.site import Site, repo_name


@dataclass(frozen=True, slots=True)
class FileView:
    number: int
    path: str
    old_path: str
    status: str
    additions: int
    deletions: int
    binary: bool
    threads: int  # open ones


def _base(request: Request) -> str:
    return f"/r/{int(request.path_params['repo'])}/{int(request.path_params['review'])}"


def _files(review: LocalReview) -> list[FileView]:
    open_threads: dict[str, int] = defaultdict(int)
    for t in review.threads:
        if t.path and not t.resolved:
            open_threads[t.path] += 1
    return [FileView(n, f.path, f.old_path, f.status, f.additions, f.deletions, f.binary,
                     open_threads[f.path]) for n, f in enumerate(review.files)]


async def index(site: Site, request: Request) -> Response:
    repos = []
    for number, ws in enumerate(site.workspaces):
        repos.append((number, repo_name(ws.top), ws.top, await local_browse.reviews(ws)))
    return site.page(request, "index.html", {"repos": repos})


async def review_page(site: Site, request: Request) -> Response:
    ws, review = await site.review(request)
    mark = await local_browse.change_mark(ws, review.id)
    return site.page(request, "review.html", {
        "review": review, "base": _base(request), "files": _files(review),
        "general": [t for t in review.threads if not t.path], "mark": mark,
        "repo": repo_name(ws.top),
        "additions": sum(f.additions for f in review.files),
        "deletions": sum(f.deletions for f in review.files)})


def _placed(rows: list[render.Row], threads: list[LocalThread]
            ) -> tuple[dict[tuple[str, int], list[LocalThread]], list[LocalThread]]:
    """Threads by the row they follow (("new", n) or ("old", n)), and those no row shows
    (their line is gone, or outside the diff's hunks)."""
    shown = {("new", r.new) for r in rows if r.new is not None}
    shown |= {("old", r.old) for r in rows if r.kind == "del" and r.old is not None}
    at: dict[tuple[str, int], list[LocalThread]] = defaultdict(list)
    elsewhere = []
    for t in threads:
        anchor = (("new", t.line) if t.line is not None
                  else ("old", t.old_line) if t.old_line is not None else None)
        if anchor is not None and anchor in shown:
            at[anchor].append(t)
        else:
            elsewhere.append(t)
    return at, elsewhere


async def file_diff(site: Site, request: Request) -> Response:
    ws, review = await site.review(request)
    path = request.query_params.get("path", "")
    changed = local_browse.changed_file(review, path)
    rows = render.diff_rows(await local_browse.file_diff(ws, review, path), path)
    at, elsewhere = _placed(rows, [t for t in review.threads if t.path == path])
    return site.page(request, "file.html", {
        "review": review, "base": _base(request), "file": changed, "rows": rows,
        "at": at, "elsewhere": elsewhere})


async def live(site: Site, request: Request) -> Response:
    ws, review = await site.review(request)
    mark = await local_browse.change_mark(ws, review.id)
    return site.page(request, "live.html", {"review": review, "base": _base(request),
                                            "mark": mark, "files": _files(review)})


async def highlight_css(site: Site, request: Request) -> Response:
    return Response(render.highlight_css(), media_type="text/css")


async def not_found(site: Site, request: Request, why: str) -> HTMLResponse:
    return site.page(request, "error.html", {"why": why}, status_code=404)
