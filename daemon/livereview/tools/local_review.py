"""Local review operations (docs/DESIGN.md §14): one function per action, shared by the command line
(`livereview review request|reply|…`) and the MCP tools; the faces only parse and render.

A `Workspace` is one repository's reviews: its git, its store (the config's database, or
`.livereview/livereview.db` in the repository when there is no config) and the local host
over both. Bad input — not a repository, a bad range, an unknown review or thread, a
description that is not JSON — raises `LocalReviewError` with a one-line reason.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from pathlib import Path

from livereview.core import local_notes
from livereview.core.local_model import (
    AuthorKind,
    Feedback,
    FileStat,
    LocalMessage,
    LocalReview,
    LocalThread,
    NewThread,
    RangeState,
    ReviewStatus,
    ThreadKind,
    UnsafeStore,
)
from livereview.hosts.local.adapter import LocalHost, merged
from livereview.hosts.local.git import BadRange, Git, GitRange, NotARepository, tracked
from livereview.store.db import Store
from livereview.store.review_export import RepoBooks, ReviewBook
from livereview.tools.errors import MAX_ID, BadInput
from livereview.tools.local_list import EXCLUDE_LINE
from livereview.tools.local_list import code_around as code_around

PEOPLE = frozenset({AuthorKind.HUMAN})  # whose words `wait` hands out
WAIT_POLL_SECONDS = 0.5
ANSWER_EVERY_SECONDS = 2.0  # the reply workflow's poll while waiting: a cycle costs git calls


class LocalReviewError(BadInput):
    """Bad input for a local review; `str()` is the one line to show."""


@dataclass
class Workspace:
    git: Git
    store: Store
    book: ReviewBook
    host: LocalHost
    author: str  # git's user.name: who a person's actions are signed by

    @property
    def top(self) -> str:
        return str(self.git.top)

    def close(self) -> None:
        self.book.close()


def open_git(repo: Path) -> Git:
    try:
        return Git.open(repo)
    except NotARepository as exc:
        raise LocalReviewError(str(exc)) from None


def open_workspace(repo: Path, host_name: str = "local") -> Workspace:
    """The reviews of the repository holding `repo`, in its own store: its `.livereview/`
    is checked (not a link, nothing tracked: store/local_folder.py), created and git-ignored
    (in .git/info/exclude, so no tracked file changes)."""
    git = open_git(repo)
    books = RepoBooks(tracked)
    try:
        book = books(str(git.top))
    except UnsafeStore as exc:
        raise LocalReviewError(str(exc)) from None
    git.exclude(EXCLUDE_LINE)
    return Workspace(git, book.store, book, LocalHost(host_name, books), git.user())


def description_json(text: str | None) -> str:
    if not text:
        return ""
    try:
        return json.dumps(json.loads(text), ensure_ascii=False)
    except json.JSONDecodeError as exc:
        raise LocalReviewError(f"--description: not JSON ({exc})") from None


def _resolve(git: Git, spec: str) -> GitRange:
    try:
        return git.resolve(spec)
    except BadRange as exc:
        raise LocalReviewError(str(exc)) from None


def _range_state(git: Git, at: GitRange, branch: str = ""
                 ) -> tuple[RangeState, list[local_notes.CodeNote]]:
    """What the range holds; its branch is the one it names or ends on now, else `branch`
    (an update keeps the branch recorded when the review was requested)."""
    rows = git.numstat(at)
    files = tuple(FileStat(r.path, r.old_path, r.status, r.additions, r.deletions, r.binary)
                  for r in rows)
    notes = local_notes.extract(git.diff(at))
    branch = git.branch_of(at.spec, at) or branch
    return RangeState(at.spec, at.base, at.head, at.worktree, files, branch), notes


def _note_thread(note: local_notes.CodeNote, author: str) -> NewThread:
    return NewThread(kind=note.kind, path=note.path, line=note.line, code=note.code,
                     author=author, author_kind=AuthorKind.CODE, body=note.text)


async def request(ws: Workspace, spec: str, title: str, description: str = "") -> LocalReview:
    """A new review of `spec`: its files, and a thread for each marked comment."""
    if not title.strip():
        raise BadInput("the review needs a title")
    at = _resolve(ws.git, spec)
    state, notes = await asyncio.to_thread(_range_state, ws.git, at)
    return await ws.book.create(ws.top, title, description, state,
                                [_note_thread(n, ws.author) for n in notes])


async def review_of(ws: Workspace, review_id: int) -> LocalReview:
    """The review as it stands now: `merged` once its branch's head is on a default branch."""
    if not 1 <= review_id <= MAX_ID:  # the database holds 64-bit ids: no such review
        raise LocalReviewError(f"no local review {review_id}")
    try:
        review = await ws.book.review(review_id)
    except LookupError as exc:
        raise LocalReviewError(str(exc)) from None
    if review.repo != ws.top:
        raise LocalReviewError(f"review {review_id} is of {review.repo}, not {ws.top}")
    return await merged(ws.git, ws.book, review)


Notice = Callable[[str], None]  # where a one-line notice for the caller goes (stderr, …)


def _ignore(_: str) -> None:
    pass


def thread_named(review: LocalReview, number: int, notice: Notice = _ignore) -> LocalThread:
    """The review's thread `number` (its number within the review, docs/DESIGN.md §14).

    The release before numbered threads across the repository; such an id still names a
    thread of this review for one release, with a notice, when the review has no thread of
    that number (a number the review has always wins: one rule, no guessing)."""
    found = review.numbered(number)
    old = review.thread(number)
    if found is not None:
        if old is not None and old is not found:
            notice(f"thread {number} is thread #{number} of review {review.id}: threads are "
                   f"numbered per review now (the repository-wide id {number} is its "
                   f"#{old.number})")
        return found
    if old is not None:
        notice(f"thread {number}: a repository-wide thread id is deprecated: it is thread "
               f"#{old.number} of review {review.id} (the old ids go in the next release)")
        return old
    raise LocalReviewError(f"review {review.id} has no thread {number}")


async def reply(ws: Workspace, review_id: int, thread: int, text: str,
                kind: AuthorKind = AuthorKind.HUMAN, notice: Notice = _ignore
                ) -> tuple[LocalThread, LocalMessage]:
    """`text` in the review's thread `thread` (its number, see thread_named)."""
    if not text.strip():
        raise BadInput("the reply is empty")
    named = thread_named(await review_of(ws, review_id), thread, notice)
    try:
        return named, await ws.book.add_message(review_id, named.id, ws.author, kind, text)
    except LookupError as exc:
        raise LocalReviewError(str(exc)) from None


async def add_comment(ws: Workspace, review_id: int, text: str, path: str = "",
                      line: int | None = None,
                      kind: AuthorKind = AuthorKind.HUMAN) -> LocalThread:
    """A new thread, on a line of a file or (no path) on the whole review."""
    review = await review_of(ws, review_id)
    code = ""
    if path:
        if path not in {f.path for f in review.files}:
            raise LocalReviewError(f"review {review_id} does not change {path}")
        code = _line_text(await _content(ws, review, path), line)
    return await ws.book.add_thread(review_id, NewThread(
        kind=ThreadKind.COMMENT, path=path, line=line if path else None, code=code,
        author=ws.author, author_kind=kind, body=text))


async def set_status(ws: Workspace, review_id: int, status: ReviewStatus,
                     comment: str = "", kind: AuthorKind = AuthorKind.HUMAN) -> LocalReview:
    async with ws.book.writing():  # the comment and the verdict together, as one writer
        await review_of(ws, review_id)
        if comment:
            await add_comment(ws, review_id, comment, kind=kind)
        await ws.book.set_status(review_id, status)
        return await ws.book.review(review_id)


async def resolve(ws: Workspace, review_id: int, thread: int, resolved: bool = True,
                  notice: Notice = _ignore) -> LocalThread:
    named = thread_named(await review_of(ws, review_id), thread, notice)
    try:
        await ws.book.set_resolved(review_id, named.id, resolved)
    except LookupError as exc:
        raise LocalReviewError(str(exc)) from None
    return named


async def update(ws: Workspace, review_id: int, spec: str) -> LocalReview:
    """The review now covers `spec` (new commits): resolved threads stay as they were; the
    others move to where their line of code is now (line None: it is gone); new marked
    comments open new threads."""
    # Read, ask git, write, as one writer (store/local_lock.py): two updates at once would
    # each add the threads the other is adding.
    async with ws.book.writing():
        return await _update(ws, review_id, spec)


async def _update(ws: Workspace, review_id: int, spec: str) -> LocalReview:
    review = await review_of(ws, review_id)
    at = _resolve(ws.git, spec)
    state, notes = await asyncio.to_thread(_range_state, ws.git, at, review.branch)
    moved = replace(review, base_sha=at.base, head_sha=at.head, worktree=at.worktree)
    anchors: dict[int, tuple[int | None, str]] = {}
    contents: dict[str, list[str]] = {}
    for thread in review.threads:
        if thread.resolved or not thread.path or not thread.code:
            continue
        if thread.path not in contents:
            contents[thread.path] = (await _content(ws, moved, thread.path)).splitlines()
        line = local_notes.reanchor(contents[thread.path], thread.code, thread.line)
        anchors[thread.id] = (line, thread.code)
    await ws.book.move_range(review_id, state, anchors)
    known = {(t.kind, t.path, t.code.strip()) for t in review.threads}
    for note in notes:
        if (note.kind, note.path, note.code.strip()) not in known:
            await ws.book.add_thread(review_id, _note_thread(note, ws.author))
    if review.status is not ReviewStatus.MERGED:
        await ws.book.set_status(review_id, ReviewStatus.PENDING)  # new code, new verdict
    return await review_of(ws, review_id)  # the new head may be merged already


async def wait(ws: Workspace, review_id: int, seconds: float,
               between: Callable[[], Awaitable[object]] | None = None,
               poll_seconds: float = WAIT_POLL_SECONDS) -> Feedback:
    """The people's feedback not handed out yet: messages, a new status; empty after
    `seconds` without any. `between` runs before each look (the reply workflow,
    so a person's reply is answered while an agent waits). A merge of the review's branch
    is a new status too: each look asks git until the review is merged."""
    review = await review_of(ws, review_id)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    answered_at = -ANSWER_EVERY_SECONDS
    while True:
        if between is not None and loop.time() - answered_at >= ANSWER_EVERY_SECONDS:
            answered_at = loop.time()
            await between()
        review = await merged(ws.git, ws.book, review)
        feedback = await ws.book.take_feedback(review_id, PEOPLE)
        left = deadline - loop.time()
        if not feedback.empty or left <= 0:
            return feedback
        await asyncio.sleep(min(poll_seconds, left))


async def _content(ws: Workspace, review: LocalReview, path: str) -> str:
    return await ws.host.content_at(review, path)


def _line_text(content: str, line: int | None) -> str:
    lines = content.splitlines()
    return lines[line - 1] if line is not None and 0 < line <= len(lines) else ""
