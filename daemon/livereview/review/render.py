"""What a review posts: finding bodies, the summary, the author's notice, the fixed note,
each ending with the hidden marker that lets a crashed run adopt what it already posted.
Pure.

Model text is hostile: it goes through `sanitize.outgoing` (no live mention, no hidden
HTML, no invisible characters) before the marker, which is the bot's own last line. The one
mention a review makes on purpose — the MR author, in the changes-requested notice — is the
only name `outgoing` is allowed to leave live.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from livereview.core.findings import Finding, Severity
from livereview.core.markdown import open_fence
from livereview.core.model import Verdict
from livereview.core.sanitize import one_line, outgoing

_MARKER = "<!-- livereview:review={token}:{part} -->"
_TRAILING = re.compile(r"(?:\A|\n)<!-- livereview:review=([0-9a-f]{8,32}):"
                       r"(summary|notify|failed|finding=\d+|fixed=\d+) -->\s*\Z")
LISTED = 50  # entries per list in a summary; the rest is counted
VERDICT_TITLES = {Verdict.APPROVED: "approved ✅",
                  Verdict.CHANGES_REQUESTED: "changes requested ❌",
                  Verdict.COMMENTED: "comments 💬"}
BADGES = {Severity.CRITICAL: "🔴 **Critical**", Severity.WARNING: "🟠 **Warning**",
          Severity.SUGGESTION: "🔵 **Suggestion**"}


def marker(token: str, part: str) -> str:
    """`part`: "summary", "notify", "failed", "finding=<n>", "fixed=<n>"."""
    return _MARKER.format(token=token, part=part)


def marked(body: str) -> tuple[str, str] | None:
    """(run token, part) of a body the bot posted for a review: its last line, exactly as
    written (a marker quoted or echoed elsewhere was defused before posting)."""
    match = _TRAILING.search(body[-200:])
    return (match.group(1), match.group(2)) if match else None


def _safe(text: str) -> str:
    safe = outgoing(text)
    fence = open_fence(safe)  # a code block left open would swallow the marker
    return outgoing(f"{safe}\n{fence}") if fence else safe


def badge(finding: Finding) -> str:
    """"🟠 **Warning · correctness**", and the model's confidence when it doubts:
    "🔵 **Suggestion · style** (confidence 40%)"."""
    emoji, name = BADGES[finding.severity].split(" ", 1)
    label = f"{emoji} **{name.strip('*')} · {finding.category.value}**"
    if finding.confidence < 1.0:
        label += f" (confidence {round(finding.confidence * 100)}%)"
    return label


def finding_body(token: str, number: int, finding: Finding) -> str:
    return (f"{badge(finding)} — {_safe(finding.body)}\n\n"
            f"{marker(token, f'finding={number}')}")


@dataclass(frozen=True)
class Summary:
    verdict: Verdict
    head_sha: str
    files_reviewed: int
    inline: Sequence[Finding]
    outside: Sequence[Finding]  # findings on lines the diff does not show
    skipped: Sequence[tuple[str, str]]  # (path, reason)
    skipped_total: int
    not_raised_again: int = 0  # resolved or conceded earlier
    fixed: int = 0  # earlier findings the new commits fixed
    previous_head: str = ""  # set for a follow-up review
    notes: Sequence[str] = ()  # the model's own summaries, a few
    unsure: Sequence[str] = ()  # files the model's answer lost findings about


def counts(findings: Sequence[Finding]) -> str:
    by = Counter(f.severity for f in findings)
    return " · ".join(f"{by.get(s, 0)} {s.value}" for s in Severity)


def summary_body(token: str, s: Summary) -> str:
    everything = [*s.inline, *s.outside]
    scope = (f"a follow-up of `{s.previous_head[:12]}`: only what changed since"
             if s.previous_head else "the whole change")
    lines = [f"### livereview review: {VERDICT_TITLES[s.verdict]}", "",
             f"Reviewed {s.files_reviewed} file(s) at `{s.head_sha[:12]}` ({scope}).",
             f"**Findings:** {counts(everything)} — {len(s.inline)} on the diff, "
             f"{len(s.outside)} below."]
    if s.fixed or s.not_raised_again:
        lines.append(f"Earlier findings: {s.fixed} fixed by the new commits (resolved), "
                     f"{s.not_raised_again} resolved or answered in their threads (not "
                     "raised again).")
    if s.outside:
        lines += ["", "#### Not on a line of the diff"]
        ranked = sorted(s.outside, key=lambda f: f.severity.rank)
        lines += [f"- {badge(f)} `{one_line(f.path)}:{f.line}` — "
                  f"{one_line(f.body, 600)}" for f in ranked[:LISTED]]
        if len(ranked) > LISTED:
            lines.append(f"- … and {len(ranked) - LISTED} more")
    if s.unsure:
        lines += ["", f"#### Not fully reviewed ({len(s.unsure)})",
                  "The model's answer about these files had items that could not be read "
                  "(invalid, or beyond the cap of findings per answer; the log names each): "
                  "not approved, and they are read again by the next review."]
        lines += [f"- `{one_line(path)}`" for path in s.unsure[:LISTED]]
        if len(s.unsure) > LISTED:
            lines.append(f"- … and {len(s.unsure) - LISTED} more")
    if s.skipped_total:
        lines += ["", f"#### Skipped files ({s.skipped_total})"]
        lines += [f"- `{one_line(path)}` — {one_line(reason)}" for path, reason in
                  s.skipped[:LISTED]]
        if s.skipped_total > min(len(s.skipped), LISTED):
            lines.append(f"- … and {s.skipped_total - min(len(s.skipped), LISTED)} more")
    if s.notes:
        lines += ["", "#### Overall"] + [f"- {one_line(note, 600)}" for note in s.notes[:5]]
    return f"{_safe(chr(10).join(lines))}\n\n{marker(token, 'summary')}"


def notice_body(token: str, author: str, verdict: Verdict, findings: Sequence[Finding],
                review_id: str = "") -> str:
    """The one comment that mentions someone: the MR author, told that changes are
    requested and by which review — the host's review id (`review_id`, from the create
    response), which a reply names to ask for the follow-up at once. Nothing in it comes
    from the model."""
    name = author if re.fullmatch(r"[\w.\-]+", author) else ""
    who = f"@{name}" if name else "The author"
    shown = review_id if re.fullmatch(r"[\w.\-]{1,80}", review_id) else ""
    text = (f"{who}: livereview review {shown or f'`{token}`'} requests changes "
            f"({VERDICT_TITLES[verdict]}; {counts(findings)}). The findings are in their "
            "threads above; reply there to discuss them.")
    if shown:
        text += (f"\n\nWhen you have addressed them, reply on review {shown} — in the thread "
                 f"of its summary, or with a comment that says \"review {shown}\" — with "
                 "what you changed, and resolve the threads you addressed: that reply starts "
                 "the follow-up review at once, without waiting for a push.")
    else:
        text += " Push a fix for a follow-up review."
    return f"{outgoing(text, [name] if name else [])}\n\n{marker(token, 'notify')}"


def fixed_note(token: str, number: int, head_sha: str) -> str:
    return (f"Fixed by the new commits (at `{head_sha[:12]}`): resolving.\n\n"
            f"{marker(token, f'fixed={number}')}")


# Why a run gave up, by its cause (failure.cause's bounded labels), in the bot's own words:
# never the model's answer or an endpoint's reply, which may carry anything, or its URL.
GAVE_UP = {
    "unreadable": "the model's answers could not be read as review findings",
    "llm": "the AI model gave no usable answer",
    "timeout": "a step kept taking too long",
    "rate_limited": "the host kept asking the bot to slow down",
    "auth": "the bot may not read or post everything here",
    "host": "the host kept failing",
    "notifier": "a notifier did not confirm delivery",
}


def failed_note(token: str, cause: str, detail: str, attempts: int) -> str:
    """The short note a review that gave up leaves on the MR: that it did, and why, with
    no mention. `detail` is the bot's own (a reason `findings.parse_findings` gives)."""
    why = GAVE_UP.get(cause, "an unexpected error")
    why += f" ({one_line(detail, 120)})" if detail else ""
    text = (f"⚠️ livereview review `{token}` could not be completed after {attempts} "
            f"attempt{'s' if attempts != 1 else ''}: {why}. Nothing was approved or "
            "resolved. Asking the bot for a review again starts a fresh one.")
    return f"{outgoing(text)}\n\n{marker(token, 'failed')}"
