"""What the model found, read from its answer. Pure.

The answer is hostile input like any comment: it may not be JSON, may be JSON of the wrong
shape, may name files that are not in the batch or lines that are not numbers. Every item
that cannot be a finding is dropped with the reason (logged by the runner), never guessed.
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from livereview.model import Side

MAX_FINDINGS = 50  # per answer: a model that lists 10 000 "findings" is not reviewing
MAX_BODY_CHARS = 4000
MAX_SUMMARY_CHARS = 2000
_JSON_BLOCK = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)


class Severity(enum.StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    SUGGESTION = "suggestion"

    @property
    def rank(self) -> int:
        return {"critical": 0, "warning": 1, "suggestion": 2}[self.value]


@dataclass(frozen=True, slots=True)
class Finding:
    severity: Severity
    path: str
    line: int
    side: Side
    body: str

    @property
    def title(self) -> str:
        """The first line: what identifies the point across reviews (lines move)."""
        return self.body.strip().splitlines()[0][:200] if self.body.strip() else ""


@dataclass(frozen=True)
class ParsedReview:
    findings: tuple[Finding, ...]
    summary: str = ""
    dropped: tuple[str, ...] = field(default=())  # one reason per item left out


def _object(raw: str) -> dict[str, Any] | None:
    text = raw.strip()
    block = _JSON_BLOCK.search(text)
    for candidate in ([block.group(1)] if block else []) + [text]:
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
        if isinstance(value, list):  # a bare list of findings is an answer too
            return {"findings": value}
    return None


def _line(value: object) -> int | None:
    # bool is an int in Python: `true` is not line 1.
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 < value < 10_000_000 else None
    if isinstance(value, str) and value.strip().isdigit():
        return _line(int(value.strip()))
    return None


def _finding(item: object, paths: Collection[str]) -> Finding | str:
    """A finding, or why `item` is not one."""
    if not isinstance(item, dict):
        return f"not an object: {type(item).__name__}"
    severity = str(item.get("severity") or "").strip().lower()
    if severity not in Severity.__members__.values():
        return f"unknown severity {severity[:40]!r}"
    path = item.get("path")
    if not isinstance(path, str) or path not in paths:
        shown = path[:200] if isinstance(path, str) else type(path).__name__
        return f"path {shown!r} is not a file of this review"
    line = _line(item.get("line"))
    if line is None:
        return f"line {str(item.get('line'))[:40]!r} of {path} is not a line number"
    side = str(item.get("side") or "new").strip().lower()
    if side not in ("new", "old"):
        return f"side {side[:20]!r} of {path}:{line} is neither new nor old"
    body = item.get("body")
    if not isinstance(body, str) or not body.strip():
        return f"finding at {path}:{line} has no text"
    text = body.strip()
    if len(text) > MAX_BODY_CHARS:
        text = text[:MAX_BODY_CHARS].rstrip() + "…"
    return Finding(Severity(severity), path, line, Side(side), text)


def parse_findings(raw: str, paths: Collection[str]) -> ParsedReview:
    """The findings of one answer about the files `paths` (only those may be named)."""
    data = _object(raw)
    if data is None:
        return ParsedReview((), dropped=("the answer is not a JSON object",))
    items = data.get("findings")
    summary = data.get("summary")
    summary_text = summary.strip()[:MAX_SUMMARY_CHARS] if isinstance(summary, str) else ""
    if items is None:
        items = []
    if not isinstance(items, list):
        return ParsedReview((), summary_text, ("`findings` is not a list",))
    found: list[Finding] = []
    dropped: list[str] = []
    for item in items:
        result = _finding(item, paths)
        if isinstance(result, str):
            dropped.append(result)
        elif len(found) >= MAX_FINDINGS:
            dropped.append(f"more than {MAX_FINDINGS} findings in one answer")
        elif result in found:
            dropped.append(f"the same finding twice at {result.path}:{result.line}")
        else:
            found.append(result)
    return ParsedReview(tuple(found), summary_text, tuple(dropped))
