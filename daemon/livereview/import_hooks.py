"""Loading a package with another kept out of its sight (docs/DESIGN.md §7).

Some libraries import an optional one whenever it is installed, for a feature livereview
never uses: structlog takes rich as its exception formatter (log_setup.py), httpcore takes
trio for its trio backend (cli/asyncio_only.py). Each costs every command that loads the
library tenths of a second and megabytes (bench figure 17). `load_without` arranges that,
while the library's package module runs, the optional one is not found: the library then
behaves exactly as where it is not installed. One already imported is left alone.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Sequence
from types import ModuleType


class _Hiding(importlib.abc.MetaPathFinder):
    def __init__(self, hidden: str, package: str) -> None:
        self.hidden, self.package = hidden, package

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname == self.hidden or fullname.startswith(f"{self.hidden}."):
            raise ModuleNotFoundError(f"{fullname} is not for {self.package} here",
                                      name=fullname)
        return None


class _Loading(importlib.abc.Loader):
    """The package's own loader, run with `hidden` out of sight, then `then()`."""

    def __init__(self, loader: importlib.abc.Loader, package: str, hidden: str,
                 then: Callable[[], None] | None) -> None:
        self._loader, self._package, self._hidden, self._then = loader, package, hidden, then

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        hide = _Hiding(self._hidden, self._package)
        sys.meta_path.insert(0, hide)
        try:
            self._loader.exec_module(module)
        finally:
            sys.meta_path.remove(hide)
        if self._then is not None:
            self._then()


class _On(importlib.abc.MetaPathFinder):
    def __init__(self, package: str, hidden: str, then: Callable[[], None] | None) -> None:
        self.package, self.hidden, self.then = package, hidden, then

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.package:
            return None
        sys.meta_path.remove(self)  # once: the other finders find the real spec
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loading(spec.loader, self.package, self.hidden, self.then)
        return spec


def load_without(package: str, hidden: str, then: Callable[[], None] | None = None) -> None:
    """When `package` is imported (after this call), `hidden` and its submodules are not
    found while its package module runs; `then()` runs once it has. Nothing if `package`
    is imported already or this was arranged before."""
    if package in sys.modules or any(
            isinstance(finder, _On) and finder.package == package for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, _On(package, hidden, then))
