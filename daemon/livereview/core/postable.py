"""Text as the bot may post it (docs/DESIGN.md §9): the model's text and anything quoted from a
comment are hostile, so mentions are defused, hidden HTML is shown, invisible characters are
dropped, no line poses as a review's verdict, and the one reply marker is the bot's own last
line. Replies (reply/compose.py) and the tools' replies (tools/writing.py) both post through
`postable`."""

from __future__ import annotations

import re
from collections.abc import Sequence

from livereview.core.markdown import open_fence
from livereview.core.sanitize import outgoing
from livereview.core.triggers import reply_marker

SHORTENED = "*(answer shortened)*"


def _clear_cut(text: str, limit: int) -> str:
    """`text` within `limit` characters, cut after a paragraph, else a line, else a
    sentence, else a word, when one ends in the last half — not in the middle of a word."""
    head = text[:limit]
    for boundary in ("\n\n", "\n", ". ", " "):
        at = head.rfind(boundary)
        if at >= limit // 2:
            return head[: at + (1 if boundary == ". " else 0)].rstrip()
    return head.rstrip()


# A review's verdict is a heading the bot writes (review/render.py); an answer or a tool
# reply that wrote one — a parroted comment, a steered model — would show a forged verdict
# under the bot's name. Escaped, it reads as the text it is.
_VERDICT_HEADING = re.compile(r"^( {0,3})(#{1,6}[ \t]+livereview review\b)",
                              re.IGNORECASE | re.MULTILINE)


def postable(text: str, message_id: str, max_chars: int,
             allow_mentions: Sequence[str] = ()) -> str:
    """`text` as the bot may post it, within `max_chars`, ending with the marker for
    `message_id`. A code block left open (by the model, or by the cut) is closed, so the
    marker stays a hidden last line; no line poses as a review's verdict."""
    safe = outgoing(_VERDICT_HEADING.sub(r"\1\\\2", text), allow_mentions)
    shortened = len(safe) > max_chars
    if shortened:  # a cut can leave a construct of its own (`</` at the end opens a comment)
        safe = outgoing(_clear_cut(safe, max_chars), allow_mentions)
    fence = open_fence(safe)
    if fence:
        safe = outgoing(f"{safe}\n{fence}", allow_mentions)
    if shortened:
        safe += f"\n\n{SHORTENED}"
    return f"{safe}\n\n{reply_marker(message_id)}"
