"""The per-answer context budget: sections filled in priority order, cuts named. Pure.

A prompt is a list of sections in reading order; each has a priority (0: always kept, the
thread and the MR summary, which bound themselves) and items (one other thread, one code
reference, one lesson). The budget is spent highest priority first, so when it runs out it
is the lowest-priority parts that go — the lessons first, then the knowledge, the other
threads, the question's code references, the anchor's hunk — and each cut is named.
Strictly: no lower-priority item is kept where a higher one was cut, even if it would fit
in what is left, so what the model saw is predictable from the priority order alone.
Tokens are estimated at 4 characters each: close enough for English and code, and it needs
no tokenizer for a model we may not know.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CHARS_PER_TOKEN = 4
ALWAYS = 0


def chars_for(tokens: int) -> int:
    return tokens * CHARS_PER_TOKEN


@dataclass(frozen=True)
class Section:
    name: str  # as a cut names it: "the other threads"
    heading: str  # "## Other open threads of this MR" (may be "")
    items: tuple[str, ...]
    priority: int = ALWAYS
    joiner: str = "\n\n"

    def render(self, items: Sequence[str] | None = None) -> str:
        body = self.joiner.join(self.items if items is None else items)
        return f"{self.heading}\n{body}" if self.heading else body


@dataclass(frozen=True)
class Fitted:
    text: str
    cuts: tuple[str, ...]
    kept: tuple[str, ...]  # names of the sections in the prompt


def fit(sections: Sequence[Section], budget_chars: int, separator: str = "\n\n") -> Fitted:
    """`sections` in their order, within `budget_chars` as far as the always-kept ones
    allow. By priority, each section keeps its items (in order) while they fit; from the
    first item that does not, the rest of it and every lower-priority section are left
    out — a lesson is never kept where a reference was cut."""
    kept: dict[int, list[str]] = {}
    spent = 0
    for index, section in enumerate(sections):
        if section.priority == ALWAYS:
            kept[index] = list(section.items)
            spent += len(section.render()) + len(separator)
    cuts: list[str] = []
    full = False  # once a part did not fit, every lower-priority part is left out too
    ranked = sorted((s.priority, i) for i, s in enumerate(sections) if s.priority != ALWAYS)
    for _, index in ranked:
        section = sections[index]
        cost = len(section.heading) + 1 + len(separator)
        chosen: list[str] = []
        for item in () if full else section.items:
            extra = len(item) + (len(section.joiner) if chosen else 0)
            if spent + cost + extra > budget_chars:
                full = True
                break
            chosen.append(item)
            cost += extra
        if not chosen:
            cuts.append(f"{section.name} (left out: over the context budget)")
            continue
        if len(chosen) < len(section.items):
            cuts.append(f"{section.name}: {len(section.items) - len(chosen)} of "
                        f"{len(section.items)} left out (over the context budget)")
        kept[index] = chosen
        spent += cost
    order = sorted(kept)
    return Fitted(separator.join(sections[i].render(kept[i]) for i in order), tuple(cuts),
                  tuple(sections[i].name for i in order))
