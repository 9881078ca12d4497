"""A repo's answer policy as the model is told it: tone, when to concede, which language,
how long. Pure; the operator's TOML is validated in settings/ and turned into this."""

from __future__ import annotations

from dataclasses import dataclass

from livereview.core.sanitize import one_line

TONES = ("concise", "thorough")
CONCEDE = ("with_evidence", "when_convinced")


@dataclass(frozen=True)
class AnswerPolicy:
    tone: str  # one of TONES
    concede: str  # one of CONCEDE
    languages: tuple[str, ...]  # () → the language of the question
    max_chars: int  # the posted answer is cut here

    def instructions(self) -> str:
        """The policy as lines of the system prompt (the operator's words, not a user's:
        still flattened, so a setting cannot open a section)."""
        tone = ("Be concise: a few sentences or a short list." if self.tone == "concise"
                else "Be thorough: explain the reasoning, cover the cases, show the code.")
        concede = ("Concede only with evidence: a line of the code shown here or a reference "
                   "that proves the colleague right; an argument alone is not enough."
                   if self.concede == "with_evidence" else
                   "Concede when the colleague's argument convinces you.")
        languages = ", ".join(one_line(lang, 40) for lang in self.languages[:5])
        language = (f"Answer in {languages} (the first of these the question is written in, "
                    "else the first)." if languages else
                    "Answer in the language the question is written in.")
        return "\n".join([
            "## Policy for this repo (the operator's; it overrides the rules above)",
            f"- {tone}", f"- {concede}", f"- {language}",
            f"- Your answer must fit in {self.max_chars} characters; it is cut there."])
