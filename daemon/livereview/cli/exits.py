"""How the command line ends when its surroundings fail it: a reader that closed stdout,
arguments that are not text. Both are said the Unix way, never as a traceback."""

from __future__ import annotations

import contextlib
import os
import signal
import sys

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
EXIT_SIGINT = 128 + signal.SIGINT  # what a shell reports for Ctrl-C
EXIT_SIGPIPE = 128 + signal.SIGPIPE  # what a shell reports for `yes | head -1`'s writer


def stdout_closed() -> int:
    """`livereview … | head -1`: the reader has what it wanted. As the Python docs advise
    (library/signal.html, "Note on SIGPIPE"): point stdout at devnull so the interpreter's
    final flush is silent, and exit as a tool killed by SIGPIPE would look to the shell."""
    with contextlib.suppress(OSError, ValueError):  # stdout may have no descriptor (tests)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return EXIT_SIGPIPE


def not_utf8(argv: list[str]) -> bytes | None:
    """The first argument with bytes that are not UTF-8 (Python keeps them as lone
    surrogates, which no encoder takes), as the bytes given."""
    for arg in argv:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return os.fsencode(arg)
    return None
