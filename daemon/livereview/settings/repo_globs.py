"""Repository path patterns, as `[[hosts]] agent_repos` names the repos an agent tool may
reach beyond the watched `[[repos]]` (docs/DESIGN.md §13, "Reach").

A pattern is a repo path whose segments may hold `*` (any characters within one segment)
and `?` (one character), or be `**` (any number of whole segments: `group/**` is every repo
under group/, subgroups too). A `*` never crosses `/`: `group/*` does not reach
`group/sub/app`, so a grant is never wider than it reads. Matching ignores ASCII case where
the host does (`fold`): GitLab, GitHub and Bitbucket resolve a path whatever its case.
Character classes (`[abc]`) are refused rather than half-supported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from livereview.settings.errors import Invalid, shown

MAX_PATTERN = 255  # GitLab's full paths are longer than any of the others' and stop here
_SEGMENT = re.compile(r"[A-Za-z0-9._~*?-]+")


def _segment_regex(segment: str) -> str:
    return "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c)
                   for c in segment)


def _regex(segments: list[str]) -> str:
    pieces: list[str] = []
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            pieces.append("[^/]+(?:/[^/]+)*" if last else "(?:[^/]+/)*")
        else:
            pieces.append(_segment_regex(segment) + ("" if last else "/"))
    return "".join(pieces)


def check_pattern(pattern: str) -> str:
    """The pattern without surrounding slashes, or Invalid saying what is wrong with it."""
    text = pattern.strip("/")
    if not text:
        raise Invalid(f"expected a repo path pattern such as \"group/*\", got {shown(pattern)}")
    if len(text) > MAX_PATTERN:
        raise Invalid(f"must be at most {MAX_PATTERN} characters, got {len(text)}")
    for segment in text.split("/"):
        if not segment:
            raise Invalid(f"empty path segment (//) in {shown(pattern)}")
        if segment in (".", ".."):
            raise Invalid(f"no . or .. segments in a repo pattern, got {shown(pattern)}")
        if "**" in segment and segment != "**":
            raise Invalid(f"** stands for whole segments only (group/**), got {shown(pattern)}")
        if "[" in segment or "]" in segment:
            raise Invalid(f"character classes ([…]) are not supported, got {shown(pattern)}")
        if not _SEGMENT.fullmatch(segment):
            raise Invalid("expected letters, digits and . _ - ~ with * ? or ** wildcards, got "
                          f"{shown(pattern)}")
    return text


@dataclass(frozen=True)
class RepoPattern:
    pattern: str
    regex: re.Pattern[str]

    @classmethod
    def of(cls, pattern: str, *, fold: bool) -> RepoPattern:
        text = check_pattern(pattern)
        flags = re.ASCII | (re.IGNORECASE if fold else 0)  # ASCII: no Kelvin sign for a k
        return cls(text, re.compile(_regex(text.split("/")), flags))

    def matches(self, path: str) -> bool:
        return self.regex.fullmatch(path) is not None


def check_patterns(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """Every pattern checked (the first wrong one named), surrounding slashes dropped."""
    return tuple(check_pattern(p) for p in patterns)
