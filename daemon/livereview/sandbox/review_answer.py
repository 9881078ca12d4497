"""What the stand-in model finds in a review prompt when no finding was scripted for a file.

The review prompt (review/prompt.py, prompts/review.md) shows each file as a `### file: PATH
(status, …)` line and its unified diff between `<untrusted-FENCE>` tags, and asks for one
JSON object `{"findings": [{severity, path, line, side, body}], "summary"}`. This reads
those sections back and reports one finding on the first added line of each file, so a
sandbox review has inline findings, a summary and a verdict like a real one. The code itself
is never quoted back: a finding's text is the engine's own, whatever the diff holds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

_FILE = re.compile(r"^### file: ([^\n]+) \((?:added|modified|removed|renamed)\b[^\n]*\n"
                   r"<untrusted-(\w+)>\n(.*?)\n</untrusted-\2>", re.MULTILINE | re.DOTALL)
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
# Cycled over the files of one prompt, so a review of a few files shows each severity.
_SEVERITIES = ("warning", "suggestion", "critical")


@dataclass(frozen=True, slots=True)
class FileDiff:
    path: str
    diff: str


def files_of(user: str) -> list[FileDiff]:
    """The files a review prompt shows, by the path an answer must name, with their diff."""
    found = []
    for match in _FILE.finditer(user):
        shown = match.group(1)
        try:  # a path shown as a JSON string (sanitize.shown_path): its value is the path
            path = json.loads(shown) if shown.startswith('"') else shown
        except json.JSONDecodeError:
            continue
        if isinstance(path, str):
            found.append(FileDiff(path, match.group(3)))
    return found


def first_added_line(diff: str) -> int | None:
    """The new-file number of the first added line of a unified diff."""
    line: int | None = None
    for text in diff.splitlines():
        hunk = _HUNK.match(text)
        if hunk:
            line = int(hunk.group(1))
        elif line is None or text.startswith(("---", "+++")):
            continue
        elif text.startswith("+"):
            return line
        elif not text.startswith(("-", "\\")):
            line += 1
    return None


def invented_findings(files: list[FileDiff], label: str) -> list[dict[str, object]]:
    findings: list[dict[str, object]] = []
    for index, file in enumerate(files):
        line = first_added_line(file.diff)
        if line is None:  # a removed file, or one whose diff adds nothing
            continue
        severity = _SEVERITIES[index % len(_SEVERITIES)]
        findings.append({
            "severity": severity, "category": "correctness", "confidence": 0.9,
            "path": file.path, "line": line, "side": "new",
            "body": f"Sandbox {severity}: the first line this change adds\n\n{label} A real "
                    "model would explain here what is wrong with this line, and propose "
                    "the fix."})
    return findings
