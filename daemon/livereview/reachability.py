"""Why a host or an endpoint cannot be reached, in words an operator acts on.

HTTP clients wrap the cause several times ("Connection error." ← "All connection
attempts failed" ← `ConnectionRefusedError`); `cause` digs it out. `diagnose` looks
for itself — DNS, then a TCP connect — for `check` and `demo --llm`, which must say at
once why a host is unreachable instead of after a request's retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from urllib.parse import urlsplit

PROBE_TIMEOUT_SECONDS = 5.0


def _chain(exc: BaseException) -> list[BaseException]:
    found: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in found and len(found) < 16:
        found.append(current)
        current = current.__cause__ or current.__context__
    return found


def cause(exc: BaseException) -> str:
    """The root cause of a failed request: DNS, refused, timed out, TLS, or the error."""
    chain = _chain(exc)
    for error in chain:
        if isinstance(error, socket.gaierror):
            return f"DNS lookup failed ({error.strerror})"
    for error in chain:
        if isinstance(error, ConnectionRefusedError):
            return "connection refused"
        if isinstance(error, ssl.SSLError):
            return f"TLS failed ({getattr(error, 'verify_message', '') or error.reason})"
    for error in chain:
        if isinstance(error, TimeoutError) or type(error).__name__.endswith("Timeout"):
            return "timed out"
    for error in chain:
        if isinstance(error, OSError) and error.strerror:
            return error.strerror[:1].lower() + error.strerror[1:]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def address(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)


async def diagnose(url: str, seconds: float = PROBE_TIMEOUT_SECONDS) -> str | None:
    """Why nothing at `url` can be reached (DNS, then TCP); None if it accepts connections."""
    host, port = address(url)
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(seconds):
            await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"cannot resolve {host}: {exc.strerror}"
    except TimeoutError:
        return f"cannot resolve {host}: no DNS answer within {seconds:g}s"
    try:
        async with asyncio.timeout(seconds):
            _, writer = await asyncio.open_connection(host, port)
    except TimeoutError:
        return (f"{host}:{port} does not answer a TCP connect within {seconds:g}s (a "
                "firewall dropping packets?)")
    except ConnectionRefusedError:
        return f"{host}:{port} refused the connection (nothing listens there)"
    except OSError as exc:
        return f"{host}:{port}: {exc.strerror or exc}"
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return None
