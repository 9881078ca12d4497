"""Lessons: what the bot learned from being convincingly corrected. Pure.

Scopes nest: a lesson for `group:gl:acme` applies to every repo under acme/, `global` to
all. Only `active` lessons reach prompts; new ones are `proposed` until a person approves
them (lessons.require_approval), and duplicates — the same principle in the same scope —
are merged rather than piling up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from livereview.core.model import Identity, Lesson, Snapshot

STATUSES = ("proposed", "active", "rejected", "archived")


def repo_scope(host: str, repo: str) -> str:
    return f"repo:{host}:{repo}"


def scopes_for(host: str, repo: str) -> list[str]:
    """Every scope that covers `repo`: itself, each enclosing group, global."""
    parts = repo.split("/")
    groups = [f"group:{host}:{'/'.join(parts[:i])}" for i in range(len(parts) - 1, 0, -1)]
    return [repo_scope(host, repo), *groups, "global"]


def valid_scope(scope: str) -> bool:
    return scope == "global" or bool(re.fullmatch(r"(repo|group):[^:\s]+:\S+", scope))


def normalized(key: str) -> str:
    """The identity of a principle for de-duplication: case, spacing, punctuation aside."""
    return " ".join(re.sub(r"[^\w\s]", " ", key.lower()).split())


def applicable(lessons: Iterable[Lesson], host: str, repo: str) -> list[Lesson]:
    """Active lessons for `repo`, most specific scope first."""
    order = {scope: i for i, scope in enumerate(scopes_for(host, repo))}
    chosen = [lesson for lesson in lessons
              if lesson.status == "active" and lesson.scope in order]
    return sorted(chosen, key=lambda lesson: (order[lesson.scope], lesson.id))


def duplicate_of(candidate: Lesson, existing: Iterable[Lesson]) -> Lesson | None:
    """A lesson of the same principle and scope that is not rejected, if any."""
    key = normalized(candidate.key)
    return next((lesson for lesson in existing
                 if lesson.scope == candidate.scope and normalized(lesson.key) == key
                 and lesson.status != "rejected"), None)


THUMBS_DOWN = frozenset({"thumbsdown", "-1"})  # GitLab's and GitHub's names for 👎


def turned_down(snapshot: Snapshot, sources: frozenset[str], identity: Identity) -> set[str]:
    """The concessions among `sources` that a human gave a 👎 — their lessons are dropped."""
    return {m.id for t in snapshot.threads for m in t.messages if m.id in sources
            and any(r.name in THUMBS_DOWN and not identity.is_me(r.user) for r in m.reactions)}
