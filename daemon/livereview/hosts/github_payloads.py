"""GitHub's REST JSON → the review model: pure functions, no I/O.

Message and thread ids are GitHub's own URL fragments: `issuecomment-<id>` (a comment on
the conversation tab), `discussion_r<id>` (a review comment; a review thread is named by its
first comment), `pullrequestreview-<id>` (a review's body).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from livereview.hosts.base import BadResponse, NotFound
from livereview.hosts.github_graphql import ThreadState
from livereview.model import Actor, Anchor, Commit, MergeRequest, Message, MRKey, Thread

ISSUE, REVIEW, REVIEW_BODY = "issuecomment-", "discussion_r", "pullrequestreview-"
_ID = re.compile(r"^(issuecomment-|discussion_r|pullrequestreview-)(\d+)$")


def parse_time(value: Any) -> datetime:
    if not isinstance(value, str):
        raise BadResponse(f"expected a timestamp, got {type(value).__name__}")
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def iso_stamp(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def actor(user: dict[str, Any] | None) -> Actor:
    if not user:  # a deleted account: GitHub shows it as "ghost"
        return Actor("0", "ghost", "Ghost")
    return Actor(str(user["id"]), str(user.get("login", "")), str(user.get("name") or ""))


def parse_id(message_or_thread_id: str) -> tuple[str, int]:
    match = _ID.match(message_or_thread_id)
    if match is None:
        raise NotFound(f"{message_or_thread_id}: not a GitHub comment id")
    return match.group(1), int(match.group(2))


def number_in_url(url: Any) -> int:
    """The PR or issue number at the end of an `issue_url` / `pull_request_url`."""
    return int(str(url).rstrip("/").rsplit("/", 1)[-1])


def review_anchor(c: dict[str, Any]) -> Anchor | None:
    """Where a review comment points. A current comment (`line` set) is at `line` in the
    diff at `commit_id`; an outdated one only at `original_line` of `original_commit_id`,
    so the worker, seeing a head that is not the PR's, reads the diff of that version.
    A comment on a whole file (`subject_type: file`) has no line: no anchor."""
    current = c.get("line") is not None
    line = c.get("line") if current else c.get("original_line")
    if not isinstance(line, int):
        return None
    head = c.get("commit_id") if current else c.get("original_commit_id")
    left = (c.get("side") or "RIGHT") == "LEFT"
    path = str(c.get("path") or "")
    return Anchor(new_path=path, old_path=path, new_line=None if left else line,
                  old_line=line if left else None, base_sha="", start_sha="",
                  head_sha=str(head or ""))


def to_message(mid: str, thread_id: str, data: dict[str, Any], at: str = "created_at"
               ) -> Message:
    created = parse_time(data[at])
    return Message(id=mid, thread_id=thread_id, author=actor(data.get("user")),
                   body=data.get("body") or "", created_at=created,
                   updated_at=parse_time(data.get("updated_at") or data[at]))


def issue_thread(c: dict[str, Any], later: tuple[Message, ...] = ()) -> Thread:
    tid = f"{ISSUE}{c['id']}"
    return Thread(id=tid, messages=(to_message(tid, tid, c), *later), individual=True)


def review_body_thread(r: dict[str, Any], later: tuple[Message, ...] = ()) -> Thread:
    tid = f"{REVIEW_BODY}{r['id']}"
    return Thread(id=tid, messages=(to_message(tid, tid, r, "submitted_at"), *later),
                  individual=True)


def review_threads(comments: list[dict[str, Any]], states: dict[int, ThreadState]
                    ) -> list[Thread]:
    by_id = {int(c["id"]): c for c in comments}

    def root(c: dict[str, Any]) -> int:
        seen: set[int] = set()
        while c.get("in_reply_to_id") and int(c["in_reply_to_id"]) not in seen:
            parent = int(c["in_reply_to_id"])
            seen.add(parent)
            if parent not in by_id:  # the first comment was deleted: keep its id
                return parent
            c = by_id[parent]
        return int(c["id"])

    groups: dict[int, list[dict[str, Any]]] = {}
    for c in comments:
        groups.setdefault(root(c), []).append(c)
    threads = []
    for root_id, items in groups.items():
        items.sort(key=lambda c: (c["created_at"], int(c["id"])))
        tid = f"{REVIEW}{root_id}"
        state = states.get(root_id)
        threads.append(Thread(
            id=tid, messages=tuple(to_message(f"{REVIEW}{c['id']}", tid, c) for c in items),
            anchor=review_anchor(by_id.get(root_id, items[0])), resolvable=True,
            resolved=state.resolved if state else False))
    return threads


def merge_request(key: MRKey, pr: dict[str, Any]) -> MergeRequest:
    state = pr.get("state") or "open"
    return MergeRequest(
        key=key, title=pr.get("title") or "", description=pr.get("body") or "",
        author=actor(pr.get("user")),
        source_branch=(pr.get("head") or {}).get("ref") or "",
        target_branch=(pr.get("base") or {}).get("ref") or "",
        state="opened" if state == "open" else "merged" if pr.get("merged_at") else "closed",
        head_sha=(pr.get("head") or {}).get("sha") or "",
        base_sha=(pr.get("base") or {}).get("sha") or "",
        start_sha=(pr.get("base") or {}).get("sha") or "",
        web_url=pr.get("html_url") or "", created_at=parse_time(pr["created_at"]),
        updated_at=parse_time(pr["updated_at"]))


def to_commit(c: dict[str, Any]) -> Commit:
    detail = c.get("commit") or {}
    when = (detail.get("committer") or {}).get("date") or (detail.get("author") or {}).get("date")
    return Commit(sha=str(c["sha"]), title=(detail.get("message") or "").split("\n", 1)[0],
                  created_at=parse_time(when),
                  parent_ids=tuple(str(p["sha"]) for p in c.get("parents") or ()))


def unified_diff(files: list[dict[str, Any]]) -> str:
    """GitHub's per-file `patch` (hunks only) as one diff; files without one (binary, too
    large) are left out."""
    out = []
    for f in files:
        patch = f.get("patch")
        if not patch:
            continue
        old = f.get("previous_filename") or f["filename"]
        out.append(f"--- a/{old}\n+++ b/{f['filename']}\n{patch}"
                   + ("" if patch.endswith("\n") else "\n"))
    return "".join(out)


def quote_question(text: str, limit: int = 400) -> str:
    text = re.sub(r"<!--.*?-->", "", text, flags=re.DOTALL).strip()
    short = text if len(text) <= limit else text[:limit] + "…"
    return "\n".join("> " + line for line in short.splitlines())
