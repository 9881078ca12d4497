"""The configured knowledge for a repo, read for a prompt: files of the repo (globs allowed,
read through the host from the target branch and cached), links, and snippets.

Entries come at three scopes, named as lessons name them: the repo's own
(`repo:HOST:PATH`), each group above it (`group:HOST:PATH`, subgroups included) and
`global`; the most specific come first, and a repo never sees another group's. A file path
at group or global scope is read from the repo being answered in."""

from __future__ import annotations

import asyncio
import fnmatch
import posixpath
import time
from dataclasses import dataclass, field
from typing import Any

from livereview.core.lessons import scopes_for
from livereview.core.model import MRKey
from livereview.core.prompt import Reference, RefKind, kind_of
from livereview.hosts.base import Host, NotFound

CACHE_SECONDS = 600.0
MAX_FILES_PER_GLOB = 10
Source = str | tuple[str, str]  # a path, a glob or a URL; or (title, text)


@dataclass
class Knowledge:
    sources: dict[str, tuple[Source, ...]] = field(default_factory=dict)  # scope → entries
    timeout_seconds: float = 60.0
    _files: dict[tuple[str, str, str, str], tuple[float, str]] = field(default_factory=dict)

    async def read(self, mr: MRKey, host: Host, ref: str, log: Any) -> list[Reference]:
        found: list[Reference] = []
        for source in self.entries(mr):
            if isinstance(source, tuple):  # a snippet written in the config
                found.append(Reference(*source, kind=RefKind.SNIPPET))
                continue
            if source.startswith(("http://", "https://")):
                found.append(Reference(source, kind=RefKind.LINK))
                continue
            try:
                paths = await self._expand(mr, host, ref, source)
            except NotFound:
                paths = []
            if not paths:
                log.warning("knowledge_file_missing", path=source, ref=ref)
            for path in paths:
                text = await self._file(mr, host, ref, path)
                if text is not None:
                    found.append(Reference(path, text, kind=kind_of(path)))
        return found

    def entries(self, mr: MRKey) -> list[Source]:
        """The entries for `mr`'s repo, most specific scope first, each once."""
        scoped = (self.sources.get(scope, ()) for scope in scopes_for(mr.host, mr.repo))
        return list(dict.fromkeys(source for entries in scoped for source in entries))

    async def _expand(self, mr: MRKey, host: Host, ref: str, source: str) -> list[str]:
        """`docs/adr/*.md` → the matching files of that folder (at most ten)."""
        if not any(c in source for c in "*?["):
            return [source]
        folder, pattern = posixpath.split(source)
        async with asyncio.timeout(self.timeout_seconds):
            listed = await host.list_files(mr.repo, ref, folder)
        matching = (p for p in listed if fnmatch.fnmatchcase(posixpath.basename(p), pattern))
        return sorted(matching)[:MAX_FILES_PER_GLOB]

    async def _file(self, mr: MRKey, host: Host, ref: str, path: str) -> str | None:
        key, now = (mr.host, mr.repo, ref, path), time.monotonic()
        cached = self._files.get(key)
        if cached is None or now - cached[0] > CACHE_SECONDS:
            try:
                async with asyncio.timeout(self.timeout_seconds):
                    text = await host.file_content(mr.repo, ref, path)
            except NotFound:
                return None
            cached = self._files[key] = (now, text)
        return cached[1]
