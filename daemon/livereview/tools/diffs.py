"""`diffstat`, `diff` and `file`: what an MR changes, one file at a time.

The diff is streamed from the host per file (`Host.diff_files`): memory is bounded by one
file, whatever the MR's size. Binary and oversized files are named with a note instead of
their text. `--context N` re-diffs each file from its two revisions (hosts serve a fixed
context), so it costs two file reads per file.
"""

from __future__ import annotations

import difflib
import mimetypes
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from contextlib import aclosing

from livereview.core.model import FileChange, FileStatus, MRKey
from livereview.core.model import FileDiff as HostFileDiff
from livereview.hosts.base import PagedDiffstat
from livereview.hosts.diffs import EVERY_FILE, PathFilter
from livereview.tools import results
from livereview.tools.errors import BadInput
from livereview.tools.refs import check_name, is_sha
from livereview.tools.toolbox import Toolbox

MAX_FILE_BYTES = 1_000_000  # one file's diff or content; past it a note says so
MAX_CONTEXT = 10_000
DEFAULT_BUDGET = 200_000  # characters of diff one collected answer holds (an agent's context)


def wanted(change: FileChange, paths: Sequence[str]) -> bool:
    """Shell-style globs (`*` crosses `/`), matched against the new and the old path."""
    return PathFilter(tuple(paths)).wants(change)


def _stat(change: FileChange) -> results.FileStat:
    return results.FileStat(path=change.new_path or change.old_path, old_path=change.old_path,
                            status=change.status.value, additions=change.additions,
                            deletions=change.deletions, binary=change.binary)


async def diffstat_pages(box: Toolbox, key: MRKey, paths: Sequence[str] = ()
                         ) -> AsyncGenerator[tuple[int, list[FileChange]], None]:
    """(files read so far, the rows `paths` wants) a page at a time, as the host serves
    them (one page holding the whole list where the host has no pages)."""
    wants = PathFilter(tuple(paths))
    asked = wants if wants.literal is not None else EVERY_FILE
    host, read = box.host(key), 0
    if not isinstance(host, PagedDiffstat):
        changes = await box.call(key, "diffstat", host.diffstat(key, asked))
        yield len(changes), [c for c in changes if wants.wants(c)]
        return
    pages = host.diffstat_pages(key, asked)
    while (page := await box.call(key, "diffstat", anext(pages, None))) is not None:
        read += len(page)
        yield read, [c for c in page if wants.wants(c)]


async def diffstat(box: Toolbox, mr: str, paths: Sequence[str] = (),
                   progress: Callable[[int], Awaitable[None]] | None = None
                   ) -> results.Diffstat:
    """The files `paths` wants; `files_total` counts the MR's files when every file was
    read (no filter, or a glob), else the files found (a host stops reading, or is asked
    for those files alone, once it has every plain path: hosts/diffs.py PathFilter).
    `progress` hears the count of files listed after each page."""
    key = await box.reached(mr)
    shown: list[FileChange] = []
    total = 0
    stream = diffstat_pages(box, key, paths)
    async with aclosing(stream):
        async for read, rows in stream:
            total = read
            shown.extend(rows)
            if progress is not None:
                await progress(len(shown))
    return results.Diffstat(mr=str(key), files_total=total,
                            additions=sum(c.additions for c in shown),
                            deletions=sum(c.deletions for c in shown),
                            files=tuple(_stat(c) for c in shown))


def stat_row(change: FileChange) -> results.FileStat:
    return _stat(change)


def _note(skipped: str, change: FileChange) -> str:
    if change.binary or skipped == "binary":
        return "binary file: no text diff"
    return f"{skipped}: diff left out (read a revision with the file operation)"


def _file(change: FileChange, diff: str, note: str = "") -> results.FileDiff:
    stat = _stat(change)
    return results.FileDiff(path=stat.path, old_path=stat.old_path, status=stat.status,
                            additions=stat.additions, deletions=stat.deletions,
                            binary=stat.binary, diff=diff, note=note)


def rediff(change: FileChange, old: str, new: str, context: int) -> str:
    """The file's unified diff with `context` lines around each change."""
    old_name = f"a/{change.old_path}" if change.status is not FileStatus.ADDED else "/dev/null"
    new_name = f"b/{change.new_path}" if change.status is not FileStatus.REMOVED \
        else "/dev/null"
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 old_name, new_name, n=context)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)


def check_context(context: int | None) -> None:
    if context is not None and not 0 <= context <= MAX_CONTEXT:
        raise BadInput(f"--context {context}: expected 0 to {MAX_CONTEXT} lines")


async def _with_context(box: Toolbox, key: MRKey, shas: tuple[str, str], item: HostFileDiff,
                        context: int) -> results.FileDiff:
    change, host = item.change, box.host(key)
    old = "" if change.status is FileStatus.ADDED else await box.call(
        key, "file", host.file_content(key.repo, shas[0], change.old_path))
    new = "" if change.status is FileStatus.REMOVED else await box.call(
        key, "file", host.file_content(key.repo, shas[1], change.new_path))
    size = max(len(old.encode()), len(new.encode()))
    if size > MAX_FILE_BYTES:
        return _file(change, "", _note(f"too large ({size} bytes)", change))
    return _file(change, rediff(change, old, new, context))


async def diff_stream(box: Toolbox, mr: str, paths: Sequence[str] = (),
                      context: int | None = None) -> AsyncGenerator[results.FileDiff, None]:
    """The MR's diff, one file at a time, as the host serves it."""
    key = await box.reached(mr)
    check_context(context)
    shas = None
    if context is not None:
        mr_now = (await box.snapshot(key)).mr
        shas = (mr_now.diff_refs().base_sha, mr_now.head_sha)
    files = box.host(key).diff_files(key, MAX_FILE_BYTES, PathFilter(tuple(paths)))
    while True:
        item = await box.call(key, "diff", anext(files, None))
        if item is None:
            return
        if item.skipped or item.change.binary:
            yield _file(item.change, "", _note(item.skipped, item.change))
        elif shas is not None and context is not None:
            yield await _with_context(box, key, shas, item, context)
        else:
            yield _file(item.change, item.diff)


async def diff(box: Toolbox, mr: str, paths: Sequence[str] = (), context: int | None = None,
               budget: int = DEFAULT_BUDGET,
               progress: Callable[[int], Awaitable[None]] | None = None) -> results.Diff:
    """The diff in one answer (the MCP tool), read until `budget` characters: the first
    file past it is named in `omitted` and reading stops there — the rest of the MR is not
    read (`diffstat` lists every file; ask for more with a path filter). `progress` hears
    the count of files read after each one."""
    files: list[results.FileDiff] = []
    omitted: list[str] = []
    used = 0
    stream = diff_stream(box, mr, paths, context)
    async with aclosing(stream):
        async for item in stream:
            if files and used + len(item.diff) > budget:
                omitted.append(item.path)
                break
            files.append(item)
            used += len(item.diff)
            if progress is not None:
                await progress(len(files))
    note = (f"stopped at {budget} characters of diff: {omitted[0]} and any files after it "
            "were not read; `diffstat` lists them, ask for them with a path filter"
            if omitted else "")
    return results.Diff(mr=str(box.mr(mr)), context=context, files=tuple(files),
                        omitted=tuple(omitted), note=note)


def _binary(text: str) -> bool:
    """NUL bytes, or bytes that were not UTF-8 (decoded as U+FFFD)."""
    return "\x00" in text or "\ufffd" in text


async def file(box: Toolbox, mr: str, path: str, ref: str = "head") -> results.FileContent:
    key = await box.reached(mr)
    path = path.strip().lstrip("/")
    if not path:
        raise BadInput("file: expected a path in the repository")
    if ref in ("head", "base"):
        mr_now = (await box.snapshot(key)).mr
        sha = mr_now.head_sha if ref == "head" else mr_now.diff_refs().base_sha
    else:
        sha = ref if is_sha(ref) else check_name(ref)
    content = await box.call(key, "file", box.host(key).file_content(key.repo, sha, path))
    mime = mimetypes.guess_type(path, strict=False)[0] or ""
    if _binary(content):  # its metadata, not its bytes (which the host gave as text)
        return results.FileContent(mr=str(key), path=path, ref=ref, sha=sha, size=None,
                                   encoding="binary", type="binary", mime=mime, content="")
    size = len(content.encode())
    if size > MAX_FILE_BYTES:
        raise BadInput(f"{path} at {sha[:12]} on {key}: {size} bytes, over the "
                       f"{MAX_FILE_BYTES}-byte limit")
    return results.FileContent(mr=str(key), path=path, ref=ref, sha=sha, size=size,
                               encoding="utf-8", type="text", mime=mime, content=content)
