"""Build the LLM input for one reply job. Pure: everything comes in as model values.

The prompt holds the MR summary, the diff hunk at the thread's anchor, the commits pushed
since the bot last spoke, and the thread window, with who wrote each message. Text written by
others is fenced as untrusted data with a fence name derived from that text (unforgeable:
sanitize.fenced) and stripped of control and invisible characters; one-line fields outside
fences (titles, branches, paths) are flattened so they cannot open a section. A character
budget keeps it bounded; whatever is cut is said to be cut.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from livereview.core.answer import MODES, SEVERITIES
from livereview.core.model import (
    Anchor,
    Commit,
    Identity,
    Lesson,
    MergeRequest,
    Message,
    Thread,
)
from livereview.core.prompt import OutputSchema, Prompt, Reference, ranked
from livereview.core.sanitize import clean, fence_id, fenced, one_line, shown_path
from livereview.core.triggers import is_ack
from livereview.reply.budget import Section, fit
from livereview.reply.code_context import PRIORITY, Surroundings
from livereview.reply.policy import AnswerPolicy

HUNK_CONTEXT_LINES = 8

# The object prompts/system.md asks for (core/answer.py reads it), as a strict JSON Schema
# for servers that enforce one: every property required, `lesson` null unless conceding.
ANSWER_SCHEMA = OutputSchema("answer", json.dumps({
    "type": "object", "additionalProperties": False,
    "required": ["mode", "severity", "answer", "concede", "lesson", "citations", "resolve"],
    "properties": {
        "mode": {"type": "string", "enum": list(MODES)},
        "severity": {"type": "string", "enum": list(SEVERITIES)},
        "answer": {"type": "string"},
        "concede": {"type": "boolean"},
        "lesson": {"anyOf": [{"type": "null"}, {
            "type": "object", "additionalProperties": False, "required": ["key", "value"],
            "properties": {"key": {"type": "string"}, "value": {"type": "string"}}}]},
        "citations": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["ref", "title"],
            "properties": {"ref": {"type": "string"}, "title": {"type": "string"}}}},
        "resolve": {"type": "boolean"}}}, separators=(",", ":")))


def system_prompt(fence: str = "FENCE") -> str:
    text = resources.files("livereview").joinpath("prompts/system.md").read_text("utf-8")
    return text.replace("{fence}", fence)


def prompt_version() -> str:
    match = re.search(r"prompt version: (\S+)", system_prompt().splitlines()[0])
    return match.group(1) if match else "unknown"


def file_section(diff_text: str, anchor: Anchor) -> str:
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
    diff_text = file_section(diff_text, anchor)
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


REFERENCE_CHARS = 1_500  # per knowledge file
DESCRIPTION_CHARS = 2_000
QUESTION_CHARS = 6_000  # the message to answer
MESSAGE_CHARS = 1_500  # every other message of the thread window
HUNK_CHARS = 6_000


def _cut(text: str, limit: int, what: str, truncated: list[str]) -> str:
    """`text` within `limit` characters; a cut is said in the text and in `truncated`.
    Pieces are cut before they are fenced, so a fence is never cut in half."""
    if len(text) <= limit:
        return text
    truncated.append(f"{what} (first {limit} characters kept)")
    return text[:limit] + "\n…(cut)"


def _who(message: Message, identity: Identity) -> str:
    role = "you (livereview)" if identity.is_me(message.author) else "human"
    return (f"@{one_line(message.author.username, 60)} [{role}] at "
            f"{message.created_at:%Y-%m-%d %H:%M}Z")


def commits_since_bot(thread: Thread, commits: tuple[Commit, ...], identity: Identity
                      ) -> tuple[Commit, ...]:
    spoke = [m.created_at for m in thread.messages
             if identity.is_me(m.author) and not is_ack(m, identity)]
    if not spoke:
        return ()
    last = max(spoke)
    return tuple(c for c in commits if c.created_at > last)


def _window(thread: Thread, trigger_id: str, identity: Identity, keep_last: int
            ) -> tuple[list[Message], int]:
    """The first message, the last `keep_last` and the one to answer; how many are left out
    (system notes and the bot's acknowledgements are not the conversation)."""
    messages = [m for m in thread.messages if not m.system and not is_ack(m, identity)]
    if len(messages) <= keep_last + 1:
        return messages, 0
    kept = [messages[0], *messages[-keep_last:]]
    if all(m.id != trigger_id for m in kept):
        kept += [m for m in messages if m.id == trigger_id]
    return kept, len(messages) - len(kept)


@dataclass
class _Parts:
    """The prompt's untrusted pieces, each already within its limit, before fencing."""

    description: str
    hunk: str | None
    stat: str | None
    references: list[tuple[str, str]]
    messages: list[tuple[Message, str]]
    truncated: list[str]

    def fence(self) -> str:
        return fence_id([self.description, self.hunk or "", self.stat or "",
                         *(text for _, text in self.references),
                         *(text for _, text in self.messages)])


def shown_references(thread: Thread, references: Sequence[Reference]) -> list[Reference]:
    """The references an answer's prompt shows: ranked by relevance to the thread's file
    (none for a general thread: the configured order), ten at most."""
    about = [thread.anchor.new_path] if thread.anchor is not None else []
    return ranked(references, about)[:10]


def _parts(mr: MergeRequest, thread: Thread, trigger_id: str, identity: Identity,
           hunk: str | None, stat: str | None, references: Sequence[Reference],
           keep_last: int) -> _Parts:
    truncated: list[str] = []
    kept, omitted = _window(thread, trigger_id, identity, keep_last)
    if omitted:
        truncated.append(f"{omitted} older messages of the thread")
    messages = [(m, _cut(clean(m.body), QUESTION_CHARS if m.id == trigger_id else
                         MESSAGE_CHARS, f"message {m.id}", truncated)) for m in kept]
    refs = [(one_line(ref.label), _cut(clean(ref.text), REFERENCE_CHARS, ref.source,
                                       truncated)) for ref in shown_references(thread, references)]
    return _Parts(
        description=_cut(clean(mr.description), DESCRIPTION_CHARS, "the MR description",
                         truncated),
        hunk=_cut(clean(hunk), HUNK_CHARS, "the diff hunk", truncated) if hunk else None,
        stat=_cut(clean(stat), HUNK_CHARS, "the diffstat", truncated) if stat else None,
        references=refs, messages=messages, truncated=truncated)


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
    budget_chars: int = 32_000,
    keep_last: int = 10,
    surroundings: Surroundings | None = None,
    policy: AnswerPolicy | None = None,
) -> Prompt:
    parts = _parts(mr, thread, trigger_id, identity, hunk, stat, references, keep_last)
    surroundings = surroundings or Surroundings()
    # Everything a host user wrote is fenced, the one-line fields too (a title, a branch, a
    # file name, a commit title are as hostile as a comment); the fence name is a hash of
    # all of it.
    summary = (f"title: {one_line(mr.title)}\nauthor: @{one_line(mr.author.username, 60)}\n"
               f"branches: {one_line(mr.source_branch)} → {one_line(mr.target_branch)}\n"
               f"state: {one_line(mr.state, 20)}\n\n{parts.description}")
    where = ""
    if thread.anchor is not None:
        at = thread.anchor
        where = f"file: {shown_path(at.new_path)}, " + (
            "the whole file" if at.whole_file else f"lines {at.start_line}-{at.line}"
            if at.start_line is not None else f"line {at.line}")
        if thread.anchor.head_sha not in ("", mr.head_sha):
            where += (f", of an earlier version (head {one_line(thread.anchor.head_sha)[:8]}; "
                      f"the MR is now at {one_line(mr.head_sha)[:8]}, so the code may have "
                      "changed since)")
    new_commits = commits_since_bot(thread, commits, identity)
    pushed = "\n".join(f"- {one_line(c.sha)[:8]} {one_line(c.title)}"
                       + (f" (by {one_line(c.author)[:80]})" if c.author else "")
                       for c in new_commits[:20])
    references_text = [f"{source}\n\n{text}" if text else source
                       for source, text in parts.references]
    fence = fence_id([summary, where, pushed, *references_text, parts.fence(),
                      *surroundings.pieces()])
    sections = [Section("the MR summary", f"## Merge request !{mr.key.iid} in "
                        f"{one_line(mr.key.repo)}", (fenced(summary, fence),))]
    if thread.anchor is not None:
        hunk_text = f"{where}\n\n{parts.hunk}" if parts.hunk else (
            f"{where}\n(the diff hunk is not available)")
        sections.append(Section("the diff hunk", "## The thread is on a line of the diff",
                                (fenced(hunk_text, fence),), PRIORITY["the diff hunk"]))
    elif parts.stat:
        sections.append(Section("the diffstat", "## What the MR changes",
                                (fenced(parts.stat, fence),), PRIORITY["the diffstat"]))
    sections += surroundings.changes_since(fence) + surroundings.code_named(fence)
    if new_commits:
        sections.append(Section("the new commits", "## Commits pushed since you last wrote "
                                "here", (fenced(pushed, fence),), PRIORITY["the new commits"]))
    sections += surroundings.conversation(fence)
    if lessons:
        sections.append(Section(
            "the lessons", "## Lessons this team taught you (follow them)",
            tuple(f"- [L{lesson.id}] {one_line(lesson.key)}: {one_line(lesson.value, 500)}"
                  for lesson in lessons[:20]), PRIORITY["the lessons"], joiner="\n"))
    if references_text:
        sections.append(Section(
            "the references", "## References for this repo (cite them when they support you)",
            tuple(f"### Reference {i}\n{fenced(text, fence)}"
                  for i, text in enumerate(references_text, 1)),
            PRIORITY["the references"], joiner="\n"))
    sections.append(Section("the thread", "## The thread", tuple(
        f"### {'THE MESSAGE TO ANSWER — ' if m.id == trigger_id else ''}{_who(m, identity)}"
        f"\n{fenced(text, fence)}" for m, text in parts.messages)))
    # Over budget: the lowest-priority parts go first, item by item, and each cut is named.
    fitted = fit(sections, budget_chars)
    truncated = [*parts.truncated, *surroundings.elsewhere.not_shown, *fitted.cuts]
    user = fitted.text
    if truncated:
        user += "\n\n(Context cut for length: " + "; ".join(truncated) + ".)"
    system = system_prompt(fence)
    if policy is not None:
        system += "\n" + policy.instructions()
    return Prompt(system=system, user=user, truncated=tuple(truncated),
                  sections=fitted.kept, schema=ANSWER_SCHEMA)
