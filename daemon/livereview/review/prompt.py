"""The LLM input for one batch of files of a review. Pure.

Everything written on the host — title, description, file names, the code itself — is
hostile: it is cleaned and fenced (sanitize.fenced, with a fence name derived from the
fenced text itself) so no line of a diff can pose as an instruction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from importlib import resources

from livereview.core.findings import Category, Severity
from livereview.core.model import FileChange, Lesson, MergeRequest
from livereview.core.prompt import OutputSchema, Prompt, Reference, ranked
from livereview.core.sanitize import clean, fence_id, fenced, one_line, shown_path

DESCRIPTION_CHARS = 4000
REFERENCE_CHARS = 3000  # of each knowledge file the repo configured
REFERENCES = 5
FILE_HEADER = "### file: "  # the sandbox's fake model reads the paths after this
# The answer prompts/review.md asks for, as a strict JSON Schema (every property required,
# none other: what OpenAI's strict mode accepts, and vLLM, Ollama and llama.cpp follow).
# The parser (core/findings.py) still reads every answer as hostile: a server that claims
# to enforce the schema may not.
FINDINGS_SCHEMA = OutputSchema("review_findings", json.dumps({
    "type": "object", "additionalProperties": False, "required": ["findings", "summary"],
    "properties": {
        "findings": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["severity", "category", "confidence", "path", "line", "side", "body"],
            "properties": {
                "severity": {"type": "string", "enum": [s.value for s in Severity]},
                "category": {"type": "string",
                             "enum": [c.value for c in Category if c is not Category.GENERAL]},
                "confidence": {"type": "number"},
                "path": {"type": "string"},
                "line": {"type": "integer"},
                "side": {"type": "string", "enum": ["new", "old"]},
                "body": {"type": "string"}}}},
        "summary": {"type": "string"}}}, separators=(",", ":")))


def system_prompt(fence: str) -> str:
    text = resources.files("livereview").joinpath("prompts/review.md").read_text("utf-8")
    return text.replace("{fence}", fence)


def build(mr: MergeRequest, files: Sequence[tuple[FileChange, str]],
          lessons: Sequence[Lesson] = (), follow_up_of: str = "",
          references: Sequence[Reference] = ()) -> Prompt:
    description = clean(mr.description)[:DESCRIPTION_CHARS]
    diffs = [clean(diff) for _, diff in files]
    refs = [(one_line(r.label), clean(r.text)[:REFERENCE_CHARS])
            for r in used_references(files, references)]
    fence = fence_id([description, *diffs, *(c.new_path for c, _ in files),
                      *(text for _, text in refs)])
    parts = [f"MR: {one_line(mr.title)} ({one_line(mr.source_branch)} → "
             f"{one_line(mr.target_branch)})", "", "Description:",
             fenced(description or "(none)", fence)]
    if follow_up_of:
        parts += ["", f"This is a follow-up review: only files changed since "
                      f"{follow_up_of[:12]} are shown."]
    if lessons:
        parts += ["", "Lessons this team taught you (follow them):"]
        parts += [f"- {one_line(lesson.key)}: {one_line(lesson.value, 500)}"
                  for lesson in lessons[:20]]
    if refs:
        parts += ["", "The team's references (what its rules say; cite them by name):"]
        for source, text in refs:
            parts += [f"- {source}"] + ([fenced(text, fence)] if text else [])
    parts += ["", f"Files to review ({len(files)}); name only these paths (one in double "
                  "quotes is a JSON string: its value is the path):"]
    for (change, _), diff in zip(files, diffs, strict=True):
        renamed = f", renamed from {shown_path(change.old_path)}" \
            if change.old_path != change.new_path else ""
        parts += ["", f"{FILE_HEADER}{shown_path(change.new_path)} ({change.status.value}, "
                      f"+{change.additions} -{change.deletions}{renamed})",
                  fenced(diff, fence)]
    return Prompt(system=system_prompt(fence), user="\n".join(parts), schema=FINDINGS_SCHEMA)


def used_references(files: Sequence[tuple[FileChange, str]],
                    references: Sequence[Reference]) -> list[Reference]:
    """The references a batch's prompt shows: the most relevant to its files, a few."""
    return ranked(references, [c.new_path for c, _ in files])[:REFERENCES]


def names(changes: Iterable[FileChange]) -> dict[str, FileChange]:
    """Each file by the names an answer may give it: its exact path, and the form `build`
    showed (sanitize.shown_path) as a model may copy it. A name two files could answer to
    (a file literally called `"a.py "` beside `a.py `) belongs to neither: a finding on it
    is dropped rather than put on the wrong file."""
    found: dict[str, FileChange] = {}
    taken: set[str] = set()
    for change in changes:
        for name in {change.new_path, shown_path(change.new_path)}:
            if name in found and found[name] is not change:
                taken.add(name)
            found[name] = change
    return {name: change for name, change in found.items() if name not in taken}
