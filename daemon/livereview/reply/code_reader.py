"""Reading the code an answer needs through the Host protocol: the region a question names,
the definition of a symbol it names, a file at two heads for an interdiff.

Files are read at a commit sha, so what was read once stays true: they are cached per
(host, repo, sha, path) in a cache bounded by bytes, least recently used out first. So is
the MR's diff, per version (its diff refs): a burst of questions on one MR reads it once,
not once an answer (bench figure 6, docs/performance.md). Each answer reads at most
`max_files` files, none bigger than `max_bytes` — a question naming fifty symbols costs no
more than one naming five.
"""

from __future__ import annotations

import asyncio
import posixpath
import re
from collections import OrderedDict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import partial

from livereview.core.model import MergeRequest, MRKey
from livereview.hosts.base import Host, NotFound
from livereview.reply.code_context import Excerpt
from livereview.reply.code_refs import Named, Place, definition, region

CACHE_BYTES = 16_000_000
DIFF = "\0diff"  # the path part of a diff's cache key: no file is named so
MAX_DIRECTORIES = 6  # folders of the MR's files searched for a definition
_NOT_CODE = re.compile(r"\.(png|jpe?g|gif|ico|svg|pdf|zip|gz|tgz|bz2|xz|jar|whl|so|dll|exe|bin|"
                       r"lock|min\.js|map|woff2?|ttf|mp[34]|pyc)$", re.IGNORECASE)
_FILE_SECTION = re.compile(r"^\+\+\+ b/", re.MULTILINE)  # each file's part of a unified diff


@dataclass
class Reads:
    """One answer's allowance of file reads."""

    max_files: int
    max_bytes: int
    used: int = 0
    skipped: list[str] = field(default_factory=list)  # what was not read, and why


@dataclass
class CodeReader:
    timeout_seconds: float = 60.0
    cache_bytes: int = CACHE_BYTES
    _files: OrderedDict[tuple[str, str, str, str], str | None] = field(
        default_factory=OrderedDict)
    _size: int = 0
    _reading: dict[tuple[str, str, str, str], asyncio.Future[str | None]] = field(
        default_factory=dict)
    _diffing: dict[tuple[str, str, str, str], asyncio.Future[str]] = field(
        default_factory=dict)
    _listed: OrderedDict[tuple[str, str, str, str], tuple[str, ...]] = field(
        default_factory=OrderedDict)

    def _remember(self, key: tuple[str, str, str, str], text: str | None) -> None:
        self._files[key] = text
        self._size += len(text or "")
        while self._size > self.cache_bytes and self._files:
            _, dropped = self._files.popitem(last=False)
            self._size -= len(dropped or "")

    async def file(self, host: Host, key: MRKey, ref: str, path: str, reads: Reads
                   ) -> str | None:
        """`path` at `ref`, or None (absent, too big, or over this answer's allowance)."""
        cache_key = (key.host, key.repo, ref, path)
        if cache_key in self._files:
            self._files.move_to_end(cache_key)
            text = self._files[cache_key]
        else:
            if reads.used >= reads.max_files:
                reads.skipped.append(f"{path} (over {reads.max_files} files read)")
                return None
            reads.used += 1
            # Answers run concurrently: two asking about one file share one request.
            reading = self._reading.get(cache_key)
            if reading is None:
                reading = asyncio.ensure_future(self._read(host, key, ref, path))
                self._reading[cache_key] = reading
                reading.add_done_callback(partial(self._read_done, cache_key))
            text = await asyncio.shield(reading)  # one waiter's timeout is not the other's
        if text is not None and len(text.encode("utf-8", "surrogatepass")) > reads.max_bytes:
            reads.skipped.append(f"{path} (over {reads.max_bytes // 1000} kB)")
            return None
        return text

    async def diff(self, host: Host, mr: MergeRequest, version_head: str | None = None
                   ) -> str:
        """The MR's diff: the current version (`mr`'s diff refs, as the poll that stored it
        read them), or the version whose head was `version_head` (a thread started before a
        push). Cached per version; answers on one MR at once share one read. A version the
        refs do not name (no head sha) is read each time."""
        key = mr.key
        # The MR is in the key: two MRs of one branch (a backport) share heads, not diffs.
        if version_head:
            cache_key = (key.host, key.repo, version_head, f"{DIFF} {key.iid} version")
        elif mr.head_sha:
            cache_key = (key.host, key.repo, mr.head_sha,
                         f"{DIFF} {key.iid} {mr.base_sha} {mr.start_sha}")
        else:
            return await host.diff(key)
        if cache_key in self._files:
            self._files.move_to_end(cache_key)
            return self._files[cache_key] or ""
        reading = self._diffing.get(cache_key)
        if reading is None:
            reading = asyncio.ensure_future(self._read_diff(host, key, version_head, cache_key))
            self._diffing[cache_key] = reading
            reading.add_done_callback(partial(self._read_done, cache_key))
        return await asyncio.shield(reading)  # one waiter's timeout is not the other's

    async def _read_diff(self, host: Host, key: MRKey, version_head: str | None,
                         cache_key: tuple[str, str, str, str]) -> str:
        async with asyncio.timeout(self.timeout_seconds):
            diff = await host.diff(key, version_head)
        if len(diff) <= self.cache_bytes // 4:  # a huge diff would push out all the rest
            self._remember(cache_key, diff)
        return diff

    def _read_done(self, cache_key: tuple[str, str, str, str],
                   reading: asyncio.Future[str | None] | asyncio.Future[str]) -> None:
        self._reading.pop(cache_key, None)
        self._diffing.pop(cache_key, None)
        if not reading.cancelled():
            reading.exception()  # retrieved: its waiters got it, or left (timed out) already

    async def _read(self, host: Host, key: MRKey, ref: str, path: str) -> str | None:
        try:
            async with asyncio.timeout(self.timeout_seconds):
                text: str | None = await host.file_content(key.repo, ref, path)
        except NotFound:
            text = None
        self._remember((key.host, key.repo, ref, path), text)
        return text

    async def _list(self, host: Host, key: MRKey, ref: str, directory: str) -> tuple[str, ...]:
        cache_key = (key.host, key.repo, ref, directory)
        if cache_key not in self._listed:
            try:
                async with asyncio.timeout(self.timeout_seconds):
                    listed = tuple(await host.list_files(key.repo, ref, directory))
            except NotFound:
                listed = ()
            self._listed[cache_key] = listed
            if len(self._listed) > 256:
                self._listed.popitem(last=False)
        return self._listed[cache_key]

    async def touched(self, host: Host, key: MRKey, head: str, diff: str | None = None,
                      names: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The files the MR changes at `head` (from `diff` when the caller has it), those
        whose changes mention one of `names` first: a definition is looked for there
        before anywhere else."""
        cache_key = (key.host, key.repo, head, "\0diff")  # kept with the files, bounded alike
        if diff is None:
            diff = self._files.get(cache_key)
        if diff is None:
            async with asyncio.timeout(self.timeout_seconds):
                diff = await host.diff(key)
        if cache_key not in self._files:
            self._remember(cache_key, diff)
        self._files.move_to_end(cache_key)
        mentioning: list[str] = []
        others: list[str] = []
        for section in _FILE_SECTION.split(diff)[1:]:
            path = section.split("\n", 1)[0].strip()
            if path and path not in mentioning and path not in others:
                hit = any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", section) for n in names)
                (mentioning if hit else others).append(path)
        return (*mentioning, *others)

    async def named_code(self, host: Host, key: MRKey, head: str, touched: tuple[str, ...],
                         named: Named, reads: Reads) -> tuple[list[Excerpt], list[str]]:
        """Excerpts for what the question names, and the names nothing here defines."""
        excerpts: list[Excerpt] = []
        for place in named.places:
            excerpt = await self._place(host, key, head, touched, place, reads)
            if excerpt is not None:
                excerpts.append(excerpt)
        wanted = list(named.symbols)
        async for path in self._candidates(host, key, head, touched, bool(wanted)):
            if not wanted:
                break
            text = await self.file(host, key, head, path, reads)
            if text is None:
                if reads.used >= reads.max_files:
                    break
                continue
            for name in list(wanted):
                found = definition(text, name)
                if found is not None:
                    excerpts.append(Excerpt(f"definition of `{name}` in {path}", found))
                    wanted.remove(name)
        return excerpts, wanted

    async def _place(self, host: Host, key: MRKey, head: str, touched: tuple[str, ...],
                     place: Place, reads: Reads) -> Excerpt | None:
        # `cache.py:42` names the MR's src/cache.py when that is the only such file.
        same_name = [p for p in touched if posixpath.basename(p) == place.path]
        path = same_name[0] if "/" not in place.path and len(same_name) == 1 else place.path
        text = await self.file(host, key, head, path, reads)
        shown = region(text, place) if text is not None else None
        if shown is None:
            return None
        label = path + (f":{place.line}" if place.line is not None else "")
        return Excerpt(label + (f"-{place.end}" if place.end else ""), shown)

    async def _candidates(self, host: Host, key: MRKey, head: str, touched: tuple[str, ...],
                          wanted: bool) -> AsyncIterator[str]:
        """The MR's files, then the other files of their folders."""
        if not wanted:
            return
        code = [p for p in touched if not _NOT_CODE.search(p)]
        for path in code:
            yield path
        folders = list(dict.fromkeys(posixpath.dirname(p) for p in code))[:MAX_DIRECTORIES]
        seen = set(code)
        for folder in folders:
            for path in await self._list(host, key, head, folder):
                if path not in seen and not _NOT_CODE.search(path):
                    seen.add(path)
                    yield path
