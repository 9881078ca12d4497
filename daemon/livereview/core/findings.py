"""What the model found, read from its answer. Pure.

The answer is hostile input like any comment: it may not be JSON, may be JSON of the wrong
shape, may name files that are not in the batch or lines that are not numbers. Every item
that cannot be a finding is dropped with the reason (logged by the runner), never guessed.

What was *not* read matters as much as what was: an answer that is not findings at all is
`unreadable` (the runner reads the batch again, and never decides a verdict on it), and a
file an item was dropped about — or every file, when the item names none we can tell — is
`unsure`: its findings may be incomplete, so it can neither be approved nor have an earlier
finding called fixed.
"""

from __future__ import annotations

import contextlib
import enum
import json
import math
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from livereview.core.model import Side
from livereview.core.sanitize import clean

MAX_FINDINGS = 50  # per answer: a model that lists 10 000 "findings" is not reviewing
MAX_BODY_CHARS = 4000
MAX_SUMMARY_CHARS = 2000
MAX_ANSWER_CHARS = 1_000_000  # far above any max_output_tokens; beyond it, not read at all
# A fence line: ``` and an info string (```json, ```suggestion…). A JSON string holds no raw
# newline, so a ``` inside a finding's body (a suggestion block) never starts a line of
# JSON text: fences are told apart line by line, in one pass.
_FENCE = re.compile(r"[ \t]{0,3}```[ \t]*([\w+-]*)[ \t]*")
_JSON_FENCES = ("", "json", "jsonc", "json5")
_JSON_BLOCKS = 50  # read per answer; any more count as unreadable (no approval)
# With no fenced block, an object may still stand on lines of its own amid prose ("Here is
# my review:\n{…}"). Tried at a few line starts only: each try may read far.
_LINE_OBJECT = re.compile(r"^[ \t]*\{", re.MULTILINE)
_LINE_OBJECT_TRIES = 20
_DECODER = json.JSONDecoder()


class Severity(enum.StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    SUGGESTION = "suggestion"

    @property
    def rank(self) -> int:
        return {"critical": 0, "warning": 1, "suggestion": 2}[self.value]


class Category(enum.StrEnum):
    """What kind of problem a finding is (the review prompt lists these words)."""

    CORRECTNESS = "correctness"
    SECURITY = "security"
    PERFORMANCE = "performance"
    RELIABILITY = "reliability"
    MAINTAINABILITY = "maintainability"
    TESTS = "tests"
    DOCS = "docs"
    STYLE = "style"
    GENERAL = "general"  # the model named none (or one we do not know): never guessed


DEFAULT_CONFIDENCE = 1.0  # a model that gives none stands by its finding


@dataclass(frozen=True, slots=True)
class Finding:
    severity: Severity
    path: str
    line: int
    side: Side
    body: str
    category: Category = Category.GENERAL
    confidence: float = DEFAULT_CONFIDENCE  # 0..1, the model's own

    @property
    def title(self) -> str:
        """The first line: what identifies the point across reviews (lines move)."""
        return self.body.strip().splitlines()[0][:200] if self.body.strip() else ""


# The prompt's words, and only synonyms that cannot mean two of them. "high", "major",
# "error", "minor", "info"… could each be one of two severities: dropped, never guessed.
_SEVERITIES = {"critical": Severity.CRITICAL, "blocker": Severity.CRITICAL,
               "blocking": Severity.CRITICAL, "warning": Severity.WARNING,
               "warn": Severity.WARNING, "suggestion": Severity.SUGGESTION,
               "nit": Severity.SUGGESTION, "nitpick": Severity.SUGGESTION}


def severity_of(value: object) -> Severity | None:
    return _SEVERITIES.get(value.strip().lower()) if isinstance(value, str) else None


def category_of(value: object) -> Category:
    """The model's category; an unknown word or none is `general` (a category only labels a
    finding: unlike a bad severity, a bad one drops nothing)."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return Category(value.strip().lower())
    return Category.GENERAL


def confidence_of(value: object) -> float | None:
    """A number in [0, 1] (a percentage 1..100 is read as one), the default when absent;
    None when it is there but not a confidence (the item is dropped: the model said
    something we cannot read)."""
    if value is None:
        return DEFAULT_CONFIDENCE
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    if not math.isfinite(number) or number < 0 or number > 100:
        return None
    return round(number / 100 if number > 1 else number, 3)


@dataclass(frozen=True)
class ParsedReview:
    findings: tuple[Finding, ...]
    summary: str = ""
    dropped: tuple[str, ...] = field(default=())  # one reason per item left out
    # Paths whose findings may be incomplete: an item about them (or about no file of the
    # batch) was dropped. Such a file is never approved nor has an earlier finding "fixed".
    unsure: frozenset[str] = frozenset()
    unreadable: str = ""  # why the answer is not findings at all ("" when it is)


_NOT_JSON = object()


def _decoded(text: str) -> object:
    try:
        value: object = json.loads(text)
    except (ValueError, RecursionError):
        return _NOT_JSON
    return value


def _blocks(text: str) -> Iterator[tuple[str, str]]:
    """(info string, content) of each fenced code block, in one pass over the lines; a
    block the answer leaves open runs to its end."""
    info: str | None = None
    lines: list[str] = []
    # Split on "\n" only: JSON allows a raw U+2028 in a string, which splitlines() cuts.
    for line in text.split("\n"):
        fence = _FENCE.fullmatch(line.rstrip("\r"))
        if info is None:
            if fence:
                info, lines = fence.group(1).lower(), []
        elif fence and not fence.group(1):
            yield info, "\n".join(lines)
            info = None
        else:
            lines.append(line)
    if info is not None:
        yield info, "\n".join(lines)


def _answers(raw: str) -> tuple[list[object], int]:
    """The JSON values of an answer — the whole of it, or else every fenced block that may
    be JSON (a model that answers twice, or shows an example first, loses neither) — and
    the number of such blocks that are not JSON."""
    whole = _decoded(raw.strip())
    if whole is not _NOT_JSON:
        return [whole], 0
    values: list[object] = []
    broken = 0
    for info, content in _blocks(raw):
        if info not in _JSON_FENCES:
            continue  # a ```suggestion or ```python block in prose: not an answer
        value = _decoded(content) if len(values) + broken < _JSON_BLOCKS else _NOT_JSON
        if value is _NOT_JSON:
            broken += 1
        else:
            values.append(value)
    if not values and not broken:
        values = list(_line_objects(raw))
    return values, broken


def _line_objects(text: str) -> Iterator[object]:
    """Objects that start a line of `text`, each read to its own end (prose around them
    and after them is not read)."""
    end = 0
    for tries, match in enumerate(_LINE_OBJECT.finditer(text)):
        if tries >= _LINE_OBJECT_TRIES:
            return
        start = match.end() - 1
        if start < end:
            continue  # inside the object just read
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (ValueError, RecursionError):
            continue
        yield value


def _items(value: object) -> list[object] | None:
    if isinstance(value, list):  # a bare list of findings is an answer too
        return value
    if isinstance(value, dict) and isinstance(value.get("findings"), list):
        items: list[object] = value["findings"]
        return items
    return None


def _summary(values: list[object]) -> str:
    texts = [clean(text).strip() for value in values if isinstance(value, dict)
             for text in [value.get("summary")] if isinstance(text, str) and text.strip()]
    return " ".join(texts)[:MAX_SUMMARY_CHARS]


def _about(item: object, paths: Collection[str]) -> frozenset[str]:
    """The files a dropped item may have been about: the one it names, or else all."""
    path = item.get("path") if isinstance(item, dict) else None
    return frozenset({path}) if isinstance(path, str) and path in paths else frozenset(paths)


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
    severity = severity_of(item.get("severity"))
    if severity is None:
        return f"unknown severity {str(item.get('severity'))[:40]!r}"
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
    confidence = confidence_of(item.get("confidence"))
    if confidence is None:
        return f"confidence {str(item.get('confidence'))[:40]!r} of {path}:{line} is not 0..1"
    text = clean(body).strip()  # shown to people, and stored: no NUL, no invisible text
    if len(text) > MAX_BODY_CHARS:
        text = text[:MAX_BODY_CHARS].rstrip() + "…"
    return Finding(severity, path, line, Side(side), text, category_of(item.get("category")),
                   confidence)


def _most_severe(found: list[Finding], limit: int) -> set[int]:
    """Indexes of the `limit` most severe findings (the first of a severity first): a cap
    must never keep fifty suggestions and drop the critical after them."""
    ranked = sorted(range(len(found)), key=lambda i: found[i].severity.rank)
    return set(ranked[:limit])


def parse_findings(raw: str, paths: Collection[str]) -> ParsedReview:
    """The findings of one answer about the files `paths` (only those may be named)."""
    if len(raw) > MAX_ANSWER_CHARS:
        return ParsedReview((), unreadable=f"the answer is {len(raw)} characters long")
    values, broken = _answers(raw)
    lists = [items for items in map(_items, values) if items is not None]
    if not lists:
        return ParsedReview((), unreadable="the answer is not JSON" if not values
                            else "the answer's JSON has no `findings` list")
    dropped: list[str] = []
    unsure: set[str] = set()
    if broken or len(lists) < len(values):
        dropped.append(f"{broken + len(values) - len(lists)} part(s) of the answer are "
                       "not findings")
        unsure.update(paths)
    valid: list[Finding] = []
    seen: set[tuple[str, str, int, str, str]] = set()  # whatever its category, confidence
    for item in (item for items in lists for item in items):
        result = _finding(item, paths)
        if isinstance(result, str):
            dropped.append(result)
            unsure.update(_about(item, paths))
        elif (result.severity, result.path, result.line, result.side, result.body) in seen:
            # nothing is lost by leaving it out
            dropped.append(f"the same finding twice at {result.path}:{result.line}")
        else:
            seen.add((result.severity, result.path, result.line, result.side, result.body))
            valid.append(result)
    kept = _most_severe(valid, MAX_FINDINGS)
    for index, finding in enumerate(valid):
        if index not in kept:
            dropped.append(f"more than {MAX_FINDINGS} findings in one answer: a "
                           f"{finding.severity.value} at {finding.path}:{finding.line}")
            unsure.add(finding.path)
    return ParsedReview(tuple(f for i, f in enumerate(valid) if i in kept), _summary(values),
                        tuple(dropped), frozenset(unsure))
