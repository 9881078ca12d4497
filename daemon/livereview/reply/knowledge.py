"""The repo's configured knowledge, read for a prompt: files of the repo (globs allowed,
read through the host from the target branch and cached), links, and snippets."""

from __future__ import annotations

import asyncio
import fnmatch
import posixpath
import time
from dataclasses import dataclass, field
from typing import Any

from livereview.hosts.base import Host, NotFound
from livereview.model import MRKey
from livereview.reply.context import Reference

CACHE_SECONDS = 600.0
MAX_FILES_PER_GLOB = 10
Source = str | tuple[str, str]  # a path, a glob or a URL; or (title, text)


@dataclass
class Knowledge:
    sources: dict[tuple[str, str], tuple[Source, ...]] = field(default_factory=dict)
    timeout_seconds: float = 60.0
    _files: dict[tuple[str, str, str, str], tuple[float, str]] = field(default_factory=dict)

    async def read(self, mr: MRKey, host: Host, ref: str, log: Any) -> list[Reference]:
        found: list[Reference] = []
        for source in self.sources.get((mr.host, mr.repo), ()):
            if isinstance(source, tuple):  # a snippet written in the config
                found.append(Reference(*source))
                continue
            if source.startswith(("http://", "https://")):
                found.append(Reference(source))
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
                    found.append(Reference(path, text))
        return found

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
