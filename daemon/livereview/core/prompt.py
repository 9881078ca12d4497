"""What any prompt is made of, whichever workflow builds it (docs/DESIGN.md §2): the model's input
(system and user text, what was cut, which sections it holds) and the repository's
knowledge a prompt may cite. The reply prompt (reply/context.py) and the review prompt
(review/prompt.py) both build these; the model client (jobs/llm.py) sends them."""

from __future__ import annotations

import enum
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

_WORD = re.compile(r"[a-z0-9]+")
_DOC_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc", ".org")
# Words every path has: they say nothing about what a reference is about.
_COMMON = frozenset({"src", "lib", "app", "main", "index", "init", "test", "tests", "the",
                     "and", "for", "com", "org", "www", "http", "https", "txt", "md"})


class RefKind(enum.StrEnum):
    """What a piece of knowledge is (docs/DESIGN.md §10): it is shown with it, and stored."""

    DOC = "doc"  # a document of the repo (Markdown, text…)
    CODE = "code"  # any other file of the repo
    LINK = "link"  # a URL (not fetched)
    SNIPPET = "snippet"  # text written in the configuration
    FINDING = "finding"  # the review finding a thread discusses


def kind_of(source: str) -> RefKind:
    """A configured entry's kind, from its name alone."""
    if source.startswith(("http://", "https://")):
        return RefKind.LINK
    name = source.lower()
    if name.endswith(_DOC_SUFFIXES) or name.startswith(("docs/", "doc/")) \
            or "/docs/" in name or posixpath.basename(name) in ("readme", "license"):
        return RefKind.DOC
    return RefKind.CODE


@dataclass(frozen=True)
class Reference:
    """Knowledge configured for the repo: a file of the repo (with its text) or a link,
    its kind, and how relevant it is to what the prompt is about (0..1, `ranked`)."""

    source: str  # "CONTRIBUTING.md" or "https://wiki.internal/style"
    text: str = ""
    kind: RefKind = RefKind.DOC
    relevance: float = 0.0

    @property
    def label(self) -> str:
        """How a prompt names it: "CONTRIBUTING.md (doc, relevance 0.40)"."""
        return f"{self.source} ({self.kind.value}, relevance {self.relevance:.2f})"


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _COMMON}


def ranked(references: Iterable[Reference], about: Sequence[str]) -> list[Reference]:
    """The references with their relevance to the paths `about` (the files a prompt shows):
    the share of those paths' words the reference's name or text uses, most relevant first
    (ties keep the configured order, most specific scope first). No tokenizer, no model:
    a prompt that can hold five references keeps the five that speak of these files."""
    wanted: set[str] = set()
    for path in about:
        wanted |= _words(path)
    scored = []
    for reference in references:
        words = _words(f"{reference.source}\n{reference.text}")
        score = round(len(wanted & words) / len(wanted), 2) if wanted else 0.0
        # A reference that came with its relevance (the finding a thread discusses) keeps it.
        scored.append(replace(reference, relevance=max(score, reference.relevance)))
    return sorted(scored, key=lambda r: -r.relevance)


@dataclass(frozen=True)
class OutputSchema:
    """The JSON shape an answer must have, for servers that enforce it (OpenAI-compatible
    structured outputs: `response_format` of type `json_schema`, strict). `schema` is the
    JSON Schema as JSON text (frozen, and sent as written)."""

    name: str
    schema: str


@dataclass(frozen=True)
class Prompt:
    system: str
    user: str
    truncated: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()  # the names of the sections the user prompt holds
    schema: OutputSchema | None = None  # asked of the server where it can enforce it

    def again(self, why: str) -> Prompt:
        """The same question once more, told why the last answer could not be read (the
        parser's words, never the answer's text)."""
        return replace(self, user=f"{self.user}\n\nYour previous answer could not be read: "
                                  f"{why}. Answer again with the JSON object only.")
