"""structlog set-up: readable lines on a TTY (and journald), JSON lines otherwise.

A redaction processor masks every configured secret wherever it appears in an event, so a
token that slips into an exception message or a URL still never reaches the log.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Iterable, MutableMapping
from typing import TYPE_CHECKING, Any, TextIO, cast

from livereview.import_hooks import load_without


def _configure_waiting() -> None:
    """Once structlog is imported: the configuration that waited for it (`configure`)."""
    if _waiting is not None:
        _apply(*_waiting)


# structlog takes rich (and pygments) as its exception formatter when rich can be imported:
# some 200 modules and a tenth of a second on every start of every command. Exceptions here
# are plain text before any renderer sees them (format_exc_info below), so rich would never
# be used. And structlog is imported by the first module that logs, not by this one: a
# command that logs nothing (`health`, `pending`) starts without it (bench figure 17).
load_without("structlog", "rich", then=_configure_waiting)

if TYPE_CHECKING:
    import structlog

# The configuration given before structlog was imported: applied when it is.
_waiting: tuple[str, tuple[str, ...], str, TextIO] | None = None

# structlog's filtering loggers drop a call below the configured level before doing
# anything (structlog/_native.py, make_filtering_bound_logger): so does `_Deferred`.
_METHOD_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "msg": logging.INFO,
                  "warning": logging.WARNING, "warn": logging.WARNING,
                  "error": logging.ERROR, "exception": logging.ERROR,
                  "critical": logging.CRITICAL, "fatal": logging.CRITICAL}


def _dropped(*_args: object, **_kwargs: object) -> None:
    return None


class _Deferred:
    """A module's logger that imports structlog when a line is logged, not when the module
    is: a call the configured level drops, before structlog is loaded, is dropped here as
    structlog would drop it. Anything else is structlog's own logger's."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, method: str) -> object:
        waiting = _waiting
        if "structlog" not in sys.modules and waiting is not None and method in _METHOD_LEVELS:
            level = logging.getLevelName(waiting[2])  # the level name `configure` was given
            if isinstance(level, int) and _METHOD_LEVELS[method] < level:
                return _dropped
        import structlog

        return getattr(structlog.get_logger(self._name), method)


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """structlog's logger for `name`, for the modules a light command loads (the HTTP
    client, a host adapter, the tools): structlog is imported by the first line logged
    (bench figure 17: `mr comments` that reads a host without a retry logs nothing)."""
    return cast("structlog.typing.FilteringBoundLogger", _Deferred(name))


REDACTED = "***"


class Redactor:
    def __init__(self, secrets: Iterable[str]) -> None:
        # Short values would mask innocent text; real tokens are long.
        self.secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            for secret in self.secrets:
                if secret in value:
                    value = value.replace(secret, REDACTED)
            return value
        if isinstance(value, dict):
            return {k: self.scrub(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.scrub(v) for v in value)
        if isinstance(value, BaseException):
            return self.scrub(f"{type(value).__name__}: {value}")
        return value

    def __call__(self, _logger: Any, _name: str, event: MutableMapping[str, Any]
                 ) -> MutableMapping[str, Any]:
        return {k: self.scrub(v) for k, v in event.items()}


class _CurrentStderr:
    """Writes to whatever sys.stderr is at the time of writing (not at configure time)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return sys.stderr.isatty()


def _wants_json(log_format: str, stream: TextIO) -> bool:
    if log_format != "auto":
        return log_format == "json"
    # journald reads plain lines best; JSON is for files and collectors.
    if os.environ.get("JOURNAL_STREAM"):
        return False
    return not stream.isatty()


def configure(log_format: str = "auto", secrets: Iterable[str] = (), *, level: str = "INFO",
              stream: TextIO | None = None) -> None:
    """structlog's processors, level and stream, and the standard library's logging. Before
    anything has imported structlog, its part waits for the import (`load_without` above)."""
    global _waiting  # one configuration per process, as structlog's own
    stream = stream or cast(TextIO, _CurrentStderr())
    if "structlog" in sys.modules:
        _waiting = None
        _apply(log_format, tuple(secrets), level, stream)
    else:
        _waiting = (log_format, tuple(secrets), level, stream)
    # Libraries log through the standard library; keep them quiet unless they warn.
    logging.basicConfig(level=logging.WARNING, stream=stream)
    for noisy in ("httpx", "httpx2", "httpcore", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # "maximum number of running instances reached" every hot tick while GitLab is slow
    # says nothing livereview_poll_cycle_seconds does not; real scheduler errors still show.
    logging.getLogger("apscheduler").setLevel(logging.ERROR)


def _apply(log_format: str, secrets: tuple[str, ...], level: str, stream: TextIO) -> None:
    import structlog

    as_json = _wants_json(log_format, stream)
    renderer: Any = (structlog.processors.JSONRenderer() if as_json
                     else structlog.dev.ConsoleRenderer(
                         colors=stream.isatty(),
                         exception_formatter=structlog.dev.plain_traceback))
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            Redactor(secrets),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )


CAUSES_KEPT = 8  # per failing subject: causes beyond these (a counter in a message) repeat


class FailureLog:
    """A failure that repeats — every poll cycle, every job, every transaction while a disk
    is full — is logged once for each cause it has while it lasts, and once when it is over
    (`<event>_recovered`), not once per attempt: a full disk whose cycles now and then
    meet a locked database is said full once, not again after each lock. Safe to call from
    any thread."""

    def __init__(self, logger: structlog.typing.FilteringBoundLogger) -> None:
        self._log = logger
        self._failing: dict[str, list[str]] = {}  # subject → causes said, the latest last
        self._lock = threading.Lock()

    def failed(self, subject: str, event: str, reason: str, *, level: int = logging.ERROR,
               **fields: Any) -> bool:
        """Record a failure of `subject`; True if this call logged it."""
        with self._lock:
            causes = self._failing.setdefault(subject, [])
            said = reason in causes
            if said:
                causes.remove(reason)
            causes.append(reason)
            del causes[:-CAUSES_KEPT]
        if said:
            return False
        self._log.log(level, event, reason=reason, **fields)
        return True

    def ok(self, subject: str, event: str, **fields: Any) -> bool:
        """Record a success of `subject`; True if this ended a failure (and logged it)."""
        with self._lock:
            if self._failing.pop(subject, None) is None:
                return False
        self._log.info(f"{event}_recovered", **fields)
        return True

    def failing(self, subject: str) -> str | None:
        """The latest cause of `subject`'s failure; None when it is not failing."""
        with self._lock:  # `failed` reorders the list in place
            causes = self._failing.get(subject)
            return causes[-1] if causes else None
