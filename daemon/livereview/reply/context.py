"""Build the LLM input for one reply job. Pure: everything comes in as model values.

The prompt holds the MR summary, the diff hunk at the thread's anchor, the commits pushed
since the bot last spoke, and the thread window, with who wrote each message. Human text
is fenced as untrusted data and stripped of control characters. A character budget keeps
it bounded; whatever is cut is said to be cut.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from livereview.model import (
    Anchor,
    Commit,
    Identity,
    Lesson,
    MergeRequest,
    Message,
    Thread,
)

HUNK_CONTEXT_LINES = 8
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean(text: str) -> str:
    """Strip ANSI escapes and control characters (keeps newlines and tabs)."""
    return _CONTROL.sub("", text)


def system_prompt() -> str:
    return resources.files("livereview").joinpath("prompts/system.md").read_text("utf-8")


def prompt_version() -> str:
    match = re.search(r"prompt version: (\S+)", system_prompt().splitlines()[0])
    return match.group(1) if match else "unknown"


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


def _file_section(diff_text: str, anchor: Anchor) -> str:
    """Only the anchored file's part of a (possibly 10 MB, 3 000-file) diff, so parsing
    stays proportional to one file."""
    for path in dict.fromkeys((anchor.new_path, anchor.old_path)):
        start = diff_text.find(f"\n+++ b/{path}\n")
        if start < 0 and diff_text.startswith(f"+++ b/{path}\n"):
            start = 0
        if start < 0:
            continue
        header = diff_text.rfind("--- ", 0, start + 1)
        end = diff_text.find("\n--- ", start + 1)
        return diff_text[max(header, 0): end + 1 if end >= 0 else len(diff_text)]
    return diff_text


def hunk_at(diff_text: str, anchor: Anchor, context: int = HUNK_CONTEXT_LINES) -> str | None:
    """The lines of the diff around the anchored line, the line itself marked with `>>`."""
    if anchor.new_line is None and anchor.old_line is None:  # a comment on a whole file
        return None
    diff_text = _file_section(diff_text, anchor)
    try:
        patch = PatchSet(diff_text)
    except UnidiffParseError:
        return None
    for patched in patch:
        if patched.path not in (anchor.new_path, anchor.old_path) and \
                patched.target_file.removeprefix("b/") != anchor.new_path:
            continue
        for hunk in patched:
            lines = list(hunk)
            hit = next((i for i, line in enumerate(lines)
                        if (anchor.new_line is not None and line.target_line_no == anchor.new_line)
                        or (anchor.new_line is None and line.source_line_no == anchor.old_line)),
                       None)
            if hit is None:
                continue
            window = lines[max(0, hit - context): hit + context + 1]
            rendered = []
            for line in window:
                number = line.target_line_no or line.source_line_no
                mark = ">>" if line is lines[hit] else "  "
                rendered.append(f"{mark}{number:>5} {line.line_type}{line.value.rstrip()}")
            return f"{patched.path}\n" + "\n".join(rendered)
    return None


def diffstat(diff_text: str, limit: int = 30) -> str:
    """Files changed with their added/removed line counts, like `git diff --stat`."""
    try:
        patch = PatchSet(diff_text)
    except UnidiffParseError:
        return ""
    rows = [f"{f.path} | +{f.added} -{f.removed}" for f in patch]
    more = [f"… and {len(rows) - limit} more files"] if len(rows) > limit else []
    total = (f"{len(rows)} files changed, +{sum(f.added for f in patch)} "
             f"-{sum(f.removed for f in patch)}")
    return "\n".join([total, *rows[:limit], *more])


def _references(references: Sequence[Reference], limit: int = 1_500) -> str:
    parts = []
    for ref in references[:10]:
        text = clean(ref.text)
        cut = " (first 1500 characters)" if len(text) > limit else ""
        parts.append(f"### {ref.source}{cut}\n{_untrusted(text[:limit])}" if text
                     else f"### {ref.source}")
    return "## References for this repo (cite them when they support you)\n" + \
        "\n".join(parts)


def _untrusted(text: str) -> str:
    return f"<untrusted>\n{clean(text).replace('</untrusted>', '')}\n</untrusted>"


def _who(message: Message, identity: Identity) -> str:
    role = "you (livereview)" if identity.is_me(message.author) else "human"
    return f"@{message.author.username} [{role}] at {message.created_at:%Y-%m-%d %H:%M}Z"


def commits_since_bot(thread: Thread, commits: tuple[Commit, ...], identity: Identity
                      ) -> tuple[Commit, ...]:
    spoke = [m.created_at for m in thread.messages if identity.is_me(m.author)]
    if not spoke:
        return ()
    last = max(spoke)
    return tuple(c for c in commits if c.created_at > last)


def _thread_window(thread: Thread, trigger_id: str, identity: Identity, keep_last: int
                   ) -> tuple[list[str], int]:
    messages = [m for m in thread.messages if not m.system]
    if len(messages) > keep_last + 1:
        kept = [messages[0], *messages[-keep_last:]]
        if all(m.id != trigger_id for m in kept):
            kept.append(next(m for m in messages if m.id == trigger_id))
        omitted = len(messages) - len(kept)
    else:
        kept, omitted = messages, 0
    parts = []
    for m in kept:
        label = "THE MESSAGE TO ANSWER — " if m.id == trigger_id else ""
        parts.append(f"### {label}{_who(m, identity)}\n{_untrusted(m.body)}")
    return parts, omitted


def build(
    mr: MergeRequest,
    thread: Thread,
    trigger_id: str,
    identity: Identity,
    *,
    hunk: str | None = None,
    stat: str | None = None,
    commits: tuple[Commit, ...] = (),
    lessons: Sequence[Lesson] = (),
    references: Sequence[Reference] = (),
    budget_chars: int = 24_000,
    keep_last: int = 10,
) -> Prompt:
    truncated: list[str] = []
    description = clean(mr.description)
    if len(description) > 2_000:
        description = description[:2_000]
        truncated.append("the MR description (first 2000 characters kept)")
    sections = [
        f"## Merge request !{mr.key.iid} in {mr.key.repo}: {clean(mr.title)}\n"
        f"Author: @{mr.author.username}; {mr.source_branch} → {mr.target_branch}; "
        f"state: {mr.state}\n{_untrusted(description)}",
    ]
    if thread.anchor is not None:
        where = f"{thread.anchor.new_path}:{thread.anchor.line}"
        if thread.anchor.head_sha not in ("", mr.head_sha):
            where += (f" of an earlier version (head {thread.anchor.head_sha[:8]}; the MR "
                      f"is now at {mr.head_sha[:8]}, so the code may have changed since)")
        sections.append(f"## The thread is on {where}\n```diff\n{hunk}\n```" if hunk
                        else f"## The thread is on {where} (the diff hunk is not available)")
    elif stat:
        sections.append(f"## What the MR changes\n```\n{stat}\n```")
    new_commits = commits_since_bot(thread, commits, identity)
    if new_commits:
        sections.append("## Commits pushed since you last wrote here\n" + "\n".join(
            f"- {c.sha[:8]} {clean(c.title)}" for c in new_commits[:20]))
    if lessons:
        sections.append("## Lessons this team taught you (follow them)\n" + "\n".join(
            f"- [L{lesson.id}] {clean(lesson.key)}: {clean(lesson.value)}"
            for lesson in lessons[:20]))
    if references:
        sections.append(_references(references))
    window, omitted = _thread_window(thread, trigger_id, identity, keep_last)
    if omitted:
        truncated.append(f"{omitted} older messages of the thread")
    sections.append("## The thread\n" + "\n\n".join(window))
    user = "\n\n".join(sections)
    if len(user) > budget_chars:
        user = user[: budget_chars // 3] + "\n…\n" + user[-(2 * budget_chars) // 3:]
        truncated.append(f"the middle of the context ({len(user)} characters kept)")
    if truncated:
        user += "\n\n(Context cut for length: " + "; ".join(truncated) + ".)"
    return Prompt(system=system_prompt(), user=user, truncated=tuple(truncated))
