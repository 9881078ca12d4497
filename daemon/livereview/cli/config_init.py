"""`livereview init [PATH] [--force]`: write the commented example config.

A path the user named that cannot hold the file is bad input (exit 2); a disk that fails
the write is a runtime failure (1). One line on stderr either way, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from importlib import resources
from pathlib import Path

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
# The target is the user's own choice: a wrong one is bad input, not a failure of ours.
_BAD_TARGET = (PermissionError, IsADirectoryError, NotADirectoryError, FileNotFoundError)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    init = sub.add_parser("init", help="write a commented example config")
    init.add_argument("path", nargs="?", type=Path, default=Path("livereview.toml"))
    init.add_argument("--force", action="store_true", help="overwrite an existing file")


def run(args: argparse.Namespace) -> int:
    target: Path = args.path
    if target.is_dir():
        print(f"livereview: init: {target} is a directory: name the file to write, e.g. "
              f"{target / 'livereview.toml'}", file=sys.stderr)
        return EXIT_USAGE
    if target.exists() and not args.force:
        print(f"livereview: {target} exists (use --force to overwrite)", file=sys.stderr)
        return EXIT_USAGE
    if not target.parent.is_dir():
        why = "is not a folder" if target.parent.exists() else "does not exist (create it first)"
        print(f"livereview: init: cannot write {target}: {target.parent} {why}",
              file=sys.stderr)
        return EXIT_USAGE
    text = resources.files("livereview").joinpath("example.toml").read_text("utf-8")
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"livereview: init: cannot write {target}: {exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, _BAD_TARGET) else EXIT_RUNTIME
    print(f"wrote {target}: set the GitLab url, the token variable and the repos, then run "
          f"`livereview --config {target} check`")
    return EXIT_OK
