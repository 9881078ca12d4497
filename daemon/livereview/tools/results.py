"""The typed results both faces render: the CLI as text or `--json`, the MCP server as
structured tool output. Plain values only (times as ISO 8601 strings), so `as_json` of a
result is exactly what both faces emit. No `slots`: the MCP SDK derives each tool's output
schema from the class attributes, which slots turn into descriptors."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class Comment:
    id: str
    thread_id: str
    author: str
    author_kind: str  # "human" | "bot" (another automated account) | "self" (this bot)
    created_at: str
    body: str
    path: str | None  # the anchor of a diff comment
    line: int | None
    side: str | None  # "new" | "old"
    resolved: bool
    replied: bool
    reply_id: str  # "" when not replied
    replied_by: str  # "daemon" | "tool" | "host" (a marked reply no store row records) | ""
    start_line: int | None = None  # a range's first line (`line` is its last), same side
    whole_file: bool = False  # on `path` as a whole: no line


@dataclasses.dataclass(frozen=True)
class Comments:
    mr: str
    total: int  # every comment on the MR (system notes are not comments)
    returned: int
    left_out_replied: int  # already answered (by the daemon or a tool call)
    left_out_own: int  # the bot's own messages
    comments: tuple[Comment, ...]


@dataclasses.dataclass(frozen=True)
class CommitShown:
    """The head commit, where the host lists the MR's commits."""

    sha: str
    author: str  # the name the host shows (never an e-mail address)
    message: str  # the author's text: hostile, shown cleaned on a terminal
    created_at: str


@dataclasses.dataclass(frozen=True)
class Overview:
    """The MR itself (`show`): what an agent's review session starts from."""

    mr: str
    title: str
    description: str  # the author's text: hostile, shown cleaned on a terminal
    author: str
    source_branch: str
    target_branch: str
    state: str  # opened | closed | merged | locked
    draft: bool
    head_sha: str
    base_sha: str
    reviewers: tuple[str, ...]  # asked to review
    approved_by: tuple[str, ...]
    labels: tuple[str, ...]  # GitLab and GitHub; Bitbucket pull requests have none
    web_url: str
    created_at: str
    updated_at: str
    head_commit: CommitShown | None = None


@dataclasses.dataclass(frozen=True)
class FileStat:
    path: str
    old_path: str
    status: str  # added | modified | removed | renamed
    additions: int
    deletions: int
    binary: bool


@dataclasses.dataclass(frozen=True)
class Diffstat:
    mr: str
    files_total: int  # in the MR, before the path filter
    additions: int  # of the files returned
    deletions: int
    files: tuple[FileStat, ...]


@dataclasses.dataclass(frozen=True)
class FileDiff:
    path: str
    old_path: str
    status: str
    additions: int
    deletions: int
    binary: bool
    diff: str  # unified diff; "" when left out
    note: str  # why the diff is left out ("binary file", "too large (…)"), else ""


@dataclasses.dataclass(frozen=True)
class Diff:
    mr: str
    context: int | None  # lines of context asked for (None: the host's own diff)
    files: tuple[FileDiff, ...]
    omitted: tuple[str, ...]  # paths past the output budget: ask for them with a path filter
    note: str


@dataclasses.dataclass(frozen=True)
class FileContent:
    mr: str
    path: str
    ref: str  # what was asked: head, base, a SHA, or a branch or tag name
    sha: str  # the revision read: a SHA, or the branch or tag name the host resolved
    size: int | None  # bytes (UTF-8); None for a binary file (hosts hand it over as text)
    encoding: str  # "utf-8", or "binary"
    type: str  # "text" or "binary"
    mime: str  # guessed from the name (mimetypes), "" when unknown
    content: str  # "" for a binary file


@dataclasses.dataclass(frozen=True)
class Posted:
    mr: str
    id: str  # the posted message's id on the host (already_answered: the other reply's)
    thread_id: str
    adopted: bool  # an earlier call had posted it (its response was lost): not posted again
    note: str
    # Nothing posted: the comment is answered by another reply, or being answered right now
    # (in_progress: its id is not known yet) — the daemon's, or another tool call's.
    already_answered: bool = False
    answered_by: str = ""  # "daemon" | "tool" | "host" when already_answered
    in_progress: bool = False


@dataclasses.dataclass(frozen=True)
class Verdict:
    mr: str
    action: str  # approve | unapprove | request_changes
    message_id: str  # the comment a host posted with it, if any
    note: str


@dataclasses.dataclass(frozen=True)
class Reply:
    host: str
    repo: str
    iid: int
    comment_id: str
    reply_id: str
    replied_at: str
    source: str  # "daemon" | "tool"


@dataclasses.dataclass(frozen=True)
class Replied:
    count: int
    replies: tuple[Reply, ...]


@dataclasses.dataclass(frozen=True)
class CommentReplied:
    """Did anyone answer this one comment? The bot's answer by the one definition the daemon
    and `comments` use (its store rows, or its marked reply on the host); people's answers
    are the later messages of the comment's thread by someone else."""

    mr: str
    comment_id: str
    thread_id: str
    replied: bool  # by the bot (daemon, a tool call, or a marked reply the host shows)
    reply_id: str  # "" when not replied
    replied_by: str  # "daemon" | "tool" | "host" | ""
    replied_at: str  # ISO 8601, "" when not replied
    answers_in_thread: tuple[str, ...]  # ids of later messages in its thread by others


Result = (Overview | CommentReplied | Comments | Diffstat | Diff | FileContent | Posted | Verdict
          | Replied)


def as_json(result: Result | FileDiff) -> dict[str, Any]:
    return dataclasses.asdict(result)
