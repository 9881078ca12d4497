"""sd_notify without a dependency: READY, STATUS, WATCHDOG and STOPPING datagrams.

The protocol is a datagram of newline-separated KEY=VALUE lines to the AF_UNIX socket in
`$NOTIFY_SOCKET` (a leading '@' means the abstract namespace). See sd_notify(3). Outside
systemd the variable is unset and every call is a no-op.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping

import structlog

log = structlog.get_logger("livereview.systemd")


class Notifier:
    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        path = env.get("NOTIFY_SOCKET", "")
        self.address = "\0" + path[1:] if path.startswith("@") else path
        self.watchdog_seconds = self._watchdog(env)

    @staticmethod
    def _watchdog(env: Mapping[str, str]) -> float | None:
        """The watchdog period systemd expects pings within (WatchdogSec=), if it is ours."""
        usec, pid = env.get("WATCHDOG_USEC", ""), env.get("WATCHDOG_PID", "")
        if not usec.isdigit() or int(usec) == 0:
            return None
        if pid and pid != str(os.getpid()):
            return None
        return int(usec) / 1_000_000

    @property
    def enabled(self) -> bool:
        return bool(self.address)

    def notify(self, **fields: str) -> bool:
        if not self.address:
            return False
        message = "\n".join(f"{key}={value}" for key, value in fields.items()).encode()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
                sock.sendto(message, self.address)
        except OSError as exc:
            log.warning("sd_notify_failed", error=str(exc))
            return False
        return True

    def ready(self, status: str) -> bool:
        return self.notify(READY="1", STATUS=status)

    def status(self, status: str) -> bool:
        return self.notify(STATUS=status)

    def watchdog(self, status: str) -> bool:
        return self.notify(WATCHDOG="1", STATUS=status)

    def stopping(self) -> bool:
        return self.notify(STOPPING="1", STATUS="stopping: finishing in-flight replies")
