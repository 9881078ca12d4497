"""What an answer may use beyond its own thread, as prompt sections. Pure.

The rest of the MR's conversation, the code the question names, and the change at the
anchor since the thread started: each item is fenced (everything in it came from the host),
each section has its place in the budget's priority order (budget.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from livereview.core.sanitize import fenced
from livereview.reply.budget import Section
from livereview.reply.interdiff import Interdiff
from livereview.reply.other_threads import Elsewhere

# Lower is kept first (0, the thread and the MR summary, is always kept).
PRIORITY = {"the diff hunk": 1, "the diffstat": 1, "the changes since the thread started": 2,
            "the code the question names": 3, "your answers in other threads": 4,
            "the other open threads": 5, "the new commits": 6, "the references": 7,
            "the lessons": 8}


@dataclass(frozen=True)
class Excerpt:
    """Code the question named, read at the MR's head."""

    label: str  # "src/cache.py:42" or "definition of `get_user` in src/users.py"
    text: str


@dataclass(frozen=True)
class Surroundings:
    elsewhere: Elsewhere = field(default_factory=lambda: Elsewhere((), ()))
    code: tuple[Excerpt, ...] = ()
    code_not_found: tuple[str, ...] = ()  # names the question used that nothing defines
    interdiff: Interdiff | None = None

    def pieces(self) -> Iterator[str]:
        """Every host-written text in here (for the fence name)."""
        yield from self.elsewhere.threads
        yield from self.elsewhere.said
        for excerpt in self.code:
            yield excerpt.label
            yield excerpt.text
        yield from self.code_not_found
        if self.interdiff is not None:
            yield self.interdiff.fate
            yield self.interdiff.diff

    def changes_since(self, fence: str) -> list[Section]:
        if self.interdiff is None:
            return []
        text = self.interdiff.fate + (f"\n\n{self.interdiff.diff}" if self.interdiff.diff
                                      else "")
        name = "the changes since the thread started"
        return [Section(name, "## What changed in this file since the thread started "
                        "(earlier version → the MR's head now)", (fenced(text, fence),),
                        PRIORITY[name])]

    def code_named(self, fence: str) -> list[Section]:
        items = [f"### {i}\n" + fenced(e.label + "\n\n" + e.text, fence)
                 for i, e in enumerate(self.code, 1)]
        if self.code_not_found:
            items.append("### Named in the question, not found in the MR's files\n"
                         + fenced(", ".join(self.code_not_found), fence))
        if not items:
            return []
        name = "the code the question names"
        return [Section(name, "## Code the question names, at the MR's head",
                        tuple(items), PRIORITY[name])]

    def conversation(self, fence: str) -> list[Section]:
        sections = []
        said = "your answers in other threads"
        if self.elsewhere.said:
            sections.append(Section(
                said, "## What you already said in other threads of this MR (do not "
                "contradict or repeat it; point to it by its link instead)",
                tuple(fenced(item, fence) for item in self.elsewhere.said), PRIORITY[said]))
        others = "the other open threads"
        if self.elsewhere.threads:
            sections.append(Section(
                others, "## Other open threads of this MR (their first message)",
                tuple(fenced(item, fence) for item in self.elsewhere.threads),
                PRIORITY[others]))
        return sections
