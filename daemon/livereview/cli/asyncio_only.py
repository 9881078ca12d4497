"""livereview runs on asyncio alone, and its processes load no trio.

httpcore (under httpx2, the one HTTP client: hosts/http.py) imports trio whenever it can,
for its trio backend and to pick its locks if it runs under trio (httpcore2/__init__.py,
_synchronization.py). Where trio is installed (the test extra's selenium brings it), that
is some 50 modules and 3.4 MB of peak RSS in every command that talks to a host, `mr
comments` among them, for a library never called (bench figure 17). While httpcore's
package loads, trio is not found (import_hooks.py): httpcore then serves asyncio exactly
as it does where trio is not installed. A trio already imported is left alone.
"""

from __future__ import annotations

from livereview.import_hooks import load_without

# httpcore's package: loading it loads each module that tries `import trio`.
HTTPCORE = "httpcore2"


def install() -> None:
    """Before httpx2 is imported (cli/commands.py imports this first); idempotent."""
    load_without(HTTPCORE, "trio")
