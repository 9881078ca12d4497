"""livereview runs on asyncio alone, and its processes load no trio.

httpcore (under httpx2, the one HTTP client: hosts/http.py) imports trio whenever it can,
for its trio backend and to pick its locks if it runs under trio (httpcore2/__init__.py,
_synchronization.py). Where trio is
installed (the test extra's selenium brings it), that is some 50 modules and 3.4 MB of
peak RSS in every command that talks to a host, `mr comments` among them, for a library
never called (bench figure 17). While httpcore's package loads, trio is not found: httpcore
then serves asyncio exactly as it does where trio is not installed. A trio already
imported is left alone.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType

# httpcore's package: loading it loads each module that tries `import trio`.
HTTPCORE = "httpcore2"


class _WithoutTrio(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == "trio" or fullname.startswith("trio."):
            raise ModuleNotFoundError(f"{fullname} is not for httpcore here", name=fullname)
        return None


class _Loading(importlib.abc.Loader):
    """httpcore's own loader, run with trio out of sight."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        hide = _WithoutTrio()
        sys.meta_path.insert(0, hide)
        try:
            self._loader.exec_module(module)
        finally:
            sys.meta_path.remove(hide)


class _OnHttpcore(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != HTTPCORE:
            return None
        sys.meta_path.remove(self)  # once: the other finders find the real spec
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loading(spec.loader)
        return spec


def install() -> None:
    """Before httpx2 is imported (cli/commands.py imports this first); idempotent."""
    if HTTPCORE in sys.modules or any(
            isinstance(finder, _OnHttpcore) for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, _OnHttpcore())
