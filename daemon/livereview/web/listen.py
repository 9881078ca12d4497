"""Where `livereview web` listens, and whether it may (DESIGN §11: loopback by default).

A page served beyond the machine shows code and lets whoever reaches it approve reviews, so
a non-loopback address is refused unless requests are authenticated: a token (a file, as
the other secrets) or a user named by a trusted reverse proxy's header. Pure: no socket.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from livereview.tools.errors import BadInput

DEFAULT_LISTEN = "127.0.0.1:8470"
_LOOPBACK_NAMES = frozenset({"localhost"})


class ListenError(BadInput):
    """A bad or refused `--listen`; `str()` is the one line to show."""


@dataclass(frozen=True, slots=True)
class Listen:
    host: str  # as given, without IPv6 brackets
    port: int  # 0: the system picks one (tests, benchmarks)

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)


def is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name other than localhost may resolve anywhere


def parse_listen(text: str) -> Listen:
    """`HOST:PORT`, `[IPv6]:PORT`."""
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host:
        raise ListenError(f"--listen {text!r}: expected HOST:PORT (e.g. {DEFAULT_LISTEN})")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not port.isdigit() or int(port) > 65535:
        raise ListenError(f"--listen {text!r}: the port must be a number from 0 to 65535")
    return Listen(host, int(port))


def check_exposure(listen: Listen, authenticated: bool) -> None:
    """Refuse a bind beyond loopback when nothing authenticates the requests."""
    if listen.loopback or authenticated:
        return
    raise ListenError(
        f"--listen {listen.host}:{listen.port}: not a loopback address, and no authentication "
        "is configured (--token-file, or --trusted-header behind a reverse proxy)")
