"""The model's answer, structured when it can be, plain when it cannot. Pure.

The system prompt asks for a JSON object (mode, severity, answer, concession, lesson,
citations, resolve). Models and servers that cannot do JSON still answer in prose: then
the whole text is the answer and the mode comes from a heuristic over the question.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from livereview.core.prompt import Reference, RefKind
from livereview.core.sanitize import clean

MODES = ("clarification", "disagreement", "help")
SEVERITIES = ("correctness", "style", "none")
_JSON_BLOCK = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)
_DISAGREE = re.compile(r"\b(disagree|not (?:true|right|correct)|wrong|i don'?t think|"
                       r"isn'?t (?:needed|necessary)|unnecessary|no need)\b", re.IGNORECASE)
_CLARIFY = re.compile(r"\b(why|what do you mean|can you explain|clarify|how come)\b",
                      re.IGNORECASE)


@dataclass(frozen=True)
class Citation:
    ref: str  # "path:line" in the MR, or a URL
    title: str = ""
    # Of the prompt's reference it names (core/prompt.RefKind's value), else what the ref
    # looks like: "link" for a URL, "code" for a path of the MR; its relevance then, else 0.
    kind: str = ""
    relevance: float = 0.0


@dataclass(frozen=True)
class StructuredAnswer:
    text: str
    mode: str
    severity: str = "none"
    concede: bool = False
    lesson: tuple[str, str] | None = None  # (principle, rule) when conceding
    citations: tuple[Citation, ...] = ()
    resolve: bool = False
    structured: bool = True

    def meta(self) -> dict[str, Any]:
        return {"mode": self.mode, "severity": self.severity, "concede": self.concede,
                "lesson": list(self.lesson) if self.lesson else None,
                "citations": [[c.ref, c.title, c.kind, c.relevance] for c in self.citations],
                "resolve": self.resolve, "structured": self.structured}

    @classmethod
    def from_meta(cls, text: str, meta: dict[str, Any]) -> StructuredAnswer:
        lesson = meta.get("lesson")
        return cls(text=text, mode=meta.get("mode", "help"),
                   severity=meta.get("severity", "none"), concede=bool(meta.get("concede")),
                   lesson=(str(lesson[0]), str(lesson[1])) if lesson else None,
                   citations=tuple(_stored_citation(c) for c in meta.get("citations", [])),
                   resolve=bool(meta.get("resolve")),
                   structured=bool(meta.get("structured", True)))


def _stored_citation(item: list[Any]) -> Citation:
    """[ref, title] as stored before citations kept their kind, or [ref, title, kind,
    relevance]."""
    ref, title, *rest = item
    kind, relevance = (str(rest[0]), float(rest[1])) if len(rest) >= 2 else ("", 0.0)
    return Citation(str(ref), str(title), kind, relevance)


def heuristic_mode(question: str) -> str:
    if _DISAGREE.search(question):
        return "disagreement"
    if _CLARIFY.search(question) or question.rstrip().endswith("?"):
        return "clarification"
    return "help"


def _json_object(raw: str) -> dict[str, Any] | None:
    text = raw.strip()
    block = _JSON_BLOCK.search(text)
    candidates = [block.group(1)] if block else []
    candidates.append(text)
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("answer"), str):
            return value
    return None


def _text(value: object) -> str:
    """A string the model wrote, as it may be shown and stored: no control characters (a
    JSON "\\u0000" is a NUL PostgreSQL refuses), no invisible ones, no lone surrogates."""
    return clean(str(value)).strip()


def _lesson(value: Any) -> tuple[str, str] | None:
    if not isinstance(value, dict):
        return None
    key, rule = _text(value.get("key") or ""), _text(value.get("value") or "")
    return (key[:200], rule[:500]) if key and rule else None


def _citations(value: Any) -> tuple[Citation, ...]:
    if not isinstance(value, list):
        return ()
    found = []
    for item in value[:10]:
        if isinstance(item, dict) and _text(item.get("ref") or ""):
            found.append(Citation(_text(item["ref"])[:500],
                                  _text(item.get("title") or "")[:200]))
    return tuple(found)


def parse(raw: str, question: str) -> StructuredAnswer:
    data = _json_object(raw)
    if data is None:
        return StructuredAnswer(text=_text(raw), mode=heuristic_mode(question),
                                structured=False)
    mode = data.get("mode") if data.get("mode") in MODES else heuristic_mode(question)
    severity = data.get("severity") if data.get("severity") in SEVERITIES else "none"
    concede = bool(data.get("concede")) and mode == "disagreement"
    return StructuredAnswer(
        text=_text(data["answer"]), mode=str(mode), severity=str(severity),
        concede=concede, lesson=_lesson(data.get("lesson")) if concede else None,
        citations=_citations(data.get("citations")), resolve=bool(data.get("resolve")))


def render(answer: StructuredAnswer) -> str:
    """The Markdown posted on the host (before the hidden marker)."""
    badge = {"correctness": "**Correctness** (this matters): ",
             "style": "**Style** (a suggestion): "}.get(answer.severity, "")
    return badge + answer.text if badge and not answer.text.startswith("**") else answer.text


_PATH_LINE = re.compile(r"[^\s:]+:\d+(?:-\d+)?")


def with_kinds(answer: StructuredAnswer, shown: Sequence[Reference]) -> StructuredAnswer:
    """The answer's citations with the kind and relevance of the reference each names (by
    its source), or else what it looks like: a URL is a `link`, `path:line` is `code` of
    the MR; anything else keeps no kind. What is stored (`knowledge_refs`) says which
    knowledge an answer stood on, and how relevant the prompt judged it."""
    by_source = {r.source: r for r in shown}
    cited = []
    for citation in answer.citations:
        known = by_source.get(citation.ref)
        if known is not None:
            kind, relevance = known.kind.value, known.relevance
        elif citation.ref.startswith(("http://", "https://")):
            kind, relevance = RefKind.LINK.value, 0.0
        elif _PATH_LINE.fullmatch(citation.ref):
            kind, relevance = RefKind.CODE.value, 0.0
        else:
            kind, relevance = "", 0.0
        cited.append(replace(citation, kind=kind, relevance=relevance))
    return replace(answer, citations=tuple(cited))
