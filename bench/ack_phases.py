"""Where the time to 👀 of figure 2d goes, per mention, from the fake GitHub's own request log
(timestamped here: the fake's log has no times).

Phases, each from the mention's writing (time.monotonic() in this process, which serves the
fake too): the first request that could have seen it arrives (the search naming its repo,
the notifications, or a `GET` of its pull request — the active tier's look or a read); the
first response that did show it is sent (its repo in the search's results, its PR among the
unread notifications, the PR's `GET` answered 200 rather than 304); the read of the
conversation tab that holds it is answered; the 👀 `POST` arrives; the 👀 is in the state.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from common import percentile

from livereview.sandbox.github.server import FakeGitHubServer
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.loopback import Response


@dataclass(frozen=True)
class Answered:
    """One request the fake answered: when it arrived and when its answer was ready."""

    arrived: float
    answered: float
    method: str
    path: str
    body: bytes  # the request's
    status: int
    answer: bytes


class TimedFake(FakeGitHub):
    """The fake GitHub, with each request's arrival time kept per serving thread."""

    arrivals: dict[int, float]

    def record_request(self, method: str, path: str, query: dict[str, str]) -> None:
        self.arrivals[threading.get_ident()] = time.monotonic()
        super().record_request(method, path, query)


class TimedServer(FakeGitHubServer):
    """Serves a TimedFake and keeps every request with its times."""

    def __init__(self, state: TimedFake, *, latency_seconds: float = 0.0) -> None:
        super().__init__(state, latency_seconds=latency_seconds)
        state.arrivals = {}
        self.timed = state
        self.log: list[Answered] = []
        self._log_lock = threading.Lock()

    def dispatch(self, method: str, path: str, query: dict[str, str], raw: bytes,
                 headers: Mapping[str, str]) -> Response:
        status, answer, out = super().dispatch(method, path, query, raw, headers)
        arrived = self.timed.arrivals.get(threading.get_ident(), time.monotonic())
        with self._log_lock:
            self.log.append(Answered(arrived, time.monotonic(), method, path, raw, status,
                                     answer))
        return status, answer, out


PHASES = ("until a request could see it", "until a response showed it", "until its read",
          "until the 👀 POST", "until the 👀")


def _search_names(r: Answered, repo: str) -> bool:
    if not r.path.endswith("/graphql") or b"query Changed" not in r.body:
        return False
    variables = json.loads(r.body).get("variables", {})
    return any(f"repo:{repo} " in f"{v} " for v in variables.values() if isinstance(v, str))


def _could_see(r: Answered, repo: str, number: int) -> bool:
    return (_search_names(r, repo) or r.path.endswith("/notifications")
            or (r.method == "GET" and r.path.endswith(f"/repos/{repo}/pulls/{number}")))


def _showed(r: Answered, repo: str, number: int) -> bool:
    if r.status != 200:
        return False
    if _search_names(r, repo):
        return f'"nameWithOwner": "{repo}"'.encode() in r.answer
    if r.path.endswith("/notifications"):
        return f"/repos/{repo}/pulls/{number}".encode() in r.answer
    return r.method == "GET" and r.path.endswith(f"/repos/{repo}/pulls/{number}")


def phases(log: Sequence[Answered], repo: str, number: int, comment_id: int,
           written: float) -> tuple[float, ...]:
    """Seconds from `written` to the end of each of PHASES (NaN: not seen)."""
    after = sorted((r for r in log if r.arrived >= written), key=lambda r: r.arrived)
    marks = [
        next((r.arrived for r in after if _could_see(r, repo, number)), None),
        next((r.answered for r in after if _showed(r, repo, number)), None),
        next((r.answered for r in after if r.method == "GET" and r.path.endswith(
            f"/repos/{repo}/issues/{number}/comments") and str(comment_id).encode() in r.answer),
            None),
        next((r.arrived for r in after if r.method == "POST" and r.path.endswith(
            f"/issues/comments/{comment_id}/reactions")), None),
        next((r.answered for r in after if r.method == "POST" and r.path.endswith(
            f"/issues/comments/{comment_id}/reactions")), None),
    ]
    return tuple(float("nan") if at is None else at - written for at in marks)


def summary(label: str, rows: Sequence[tuple[float, ...]]) -> str:
    """p50 / p95 / max of each phase's end over `rows` (one line)."""
    parts = []
    for i, name in enumerate(PHASES):
        values = [row[i] for row in rows if row[i] == row[i]]
        parts.append(f"{name} {percentile(values, 50):.2f} / {percentile(values, 95):.2f} / "
                     f"{max(values, default=float('nan')):.2f}")
    return f"{label:>10} phases, s from the mention (p50 / p95 / max): " + "; ".join(parts)
