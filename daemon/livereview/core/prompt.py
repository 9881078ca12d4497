"""What any prompt is made of, whichever workflow builds it (docs/DESIGN.md §2): the model's input
(system and user text, what was cut, which sections it holds) and the repository's
knowledge a prompt may cite. The reply prompt (reply/context.py) and the review prompt
(review/prompt.py) both build these; the model client (jobs/llm.py) sends them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    """Knowledge configured for the repo: a file of the repo (with its text) or a link."""

    source: str  # "CONTRIBUTING.md" or "https://wiki.internal/style"
    text: str = ""


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str
    truncated: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()  # the names of the sections the user prompt holds
