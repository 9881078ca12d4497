"""GitHub's REST JSON → the review model: pure functions, no I/O.

Message and thread ids are GitHub's own URL fragments: `issuecomment-<id>` (a comment on
the conversation tab), `discussion_r<id>` (a review comment; a review thread is named by its
first comment), `pullrequestreview-<id>` (a review's body).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from livereview.core.model import Actor, Anchor, Commit, MergeRequest, Message, MRKey, Thread
from livereview.hosts.base import NotFound
from livereview.hosts.github.graphql import ThreadState
from livereview.hosts.payload import JsonObject

ISSUE, REVIEW, REVIEW_BODY = "issuecomment-", "discussion_r", "pullrequestreview-"
_ID = re.compile(r"^(issuecomment-|discussion_r|pullrequestreview-)(\d+)$")
_NUMBER_AT_END = re.compile(r"/([0-9]{1,18})/?$")


def iso_stamp(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def actor(user: JsonObject | None) -> Actor:
    """A user; GitHub marks an App's account `type: "Bot"` with a login ending in `[bot]`
    (https://docs.github.com/en/apps/creating-github-apps/about-creating-github-apps/about-creating-github-apps#about-github-apps)."""
    if user is None:  # a deleted account: GitHub shows it as "ghost"
        return Actor("0", "ghost", "Ghost")
    login = user.text_or("login")
    return Actor(str(user.number("id")), login, user.text_or("name"),
                 user.text_or("type") == "Bot" or login.endswith("[bot]"))


def parse_id(message_or_thread_id: str) -> tuple[str, int]:
    match = _ID.match(message_or_thread_id)
    if match is None:
        raise NotFound(f"{message_or_thread_id}: not a GitHub comment id")
    return match.group(1), int(match.group(2))


def number_in_url(data: JsonObject, key: str) -> int:
    """The PR or issue number at the end of an `issue_url` / `pull_request_url`."""
    match = _NUMBER_AT_END.search(data.text(key))
    if match is None:
        raise data.error(key, "no number at its end")
    return int(match.group(1))


def review_comment_place(anchor: Anchor) -> dict[str, object]:
    """Where a new review comment goes (https://docs.github.com/rest/pulls/comments#create-
    a-review-comment-for-a-pull-request): `line` and `side` (RIGHT: the head's lines, LEFT:
    the base's), a range's first line as `start_line` and `start_side`, or the whole file
    as `subject_type: file` with no line."""
    where: dict[str, object] = {"commit_id": anchor.head_sha, "path": anchor.new_path}
    if anchor.whole_file:
        return {**where, "subject_type": "file"}
    side = "LEFT" if anchor.new_line is None else "RIGHT"
    where.update(line=anchor.line, side=side)
    if anchor.start_line is not None:
        where.update(start_line=anchor.start_line, start_side=side)
    return where


def review_anchor(c: JsonObject) -> Anchor | None:
    """Where a review comment points. A current comment (`line` set) is at `line` in the
    diff at `commit_id`; an outdated one only at `original_line` of `original_commit_id`,
    so the worker, seeing a head that is not the PR's, reads the diff of that version.
    A multi-line comment starts at `start_line` (`original_start_line`); a comment on a
    whole file (`subject_type: file`) has no line."""
    path = c.text_or("path")
    current = c.has("line")
    head = c.text_or("commit_id" if current else "original_commit_id")
    if c.text_or("subject_type", "line") == "file":
        return Anchor(new_path=path, old_path=path, new_line=None, old_line=None,
                      base_sha="", start_sha="", head_sha=c.text_or("commit_id"))
    line = c.number_or_none("line" if current else "original_line")
    if line is None:
        return None
    left = c.text_or("side", "RIGHT") == "LEFT"
    start = c.number_or_none("start_line" if current else "original_start_line")
    start_left = c.text_or("start_side", "LEFT" if left else "RIGHT") == "LEFT"
    return Anchor(new_path=path, old_path=path, new_line=None if left else line,
                  old_line=line if left else None, base_sha="", start_sha="", head_sha=head,
                  start_new_line=None if start_left else start,
                  start_old_line=start if start_left else None)


def to_message(mid: str, thread_id: str, data: JsonObject, at: str = "created_at"
               ) -> Message:
    created = data.time(at)
    return Message(id=mid, thread_id=thread_id, author=actor(data.obj_or_none("user")),
                   body=data.text_or("body"), created_at=created,
                   updated_at=data.time_or_none("updated_at") or created)


def issue_message(c: JsonObject, thread_id: str | None = None) -> Message:
    mid = f"{ISSUE}{c.number('id')}"
    return to_message(mid, thread_id or mid, c)


def review_message(c: JsonObject, thread_id: str | None = None) -> Message:
    mid = f"{REVIEW}{c.number('id')}"
    return to_message(mid, thread_id or mid, c)


def issue_thread(c: JsonObject, later: tuple[Message, ...] = ()) -> Thread:
    first = issue_message(c)
    return Thread(id=first.id, messages=(first, *later), individual=True)


def review_body_thread(r: JsonObject, later: tuple[Message, ...] = ()) -> Thread:
    tid = f"{REVIEW_BODY}{r.number('id')}"
    return Thread(id=tid, messages=(to_message(tid, tid, r, "submitted_at"), *later),
                  individual=True)


def _roots(by_id: dict[int, JsonObject]) -> dict[int, int]:
    """Each review comment's thread root: follow `in_reply_to_id` to the first comment (or
    to a deleted one, whose id names the thread). Memoized, so linear in the comments even
    if a payload chains replies to replies or loops."""
    roots: dict[int, int] = {}
    for start in by_id:
        chain, node, seen = [], start, set()
        while node not in roots:
            c = by_id.get(node)
            parent = c.number_or_none("in_reply_to_id") if c is not None else None
            if not parent or node in seen:
                roots[node] = node
                break
            seen.add(node)
            chain.append(node)
            node = parent
        for n in chain:
            roots[n] = roots[node]
    return roots


def review_threads(comments: list[JsonObject], states: dict[int, ThreadState]
                   ) -> list[Thread]:
    by_id = {c.number("id"): c for c in comments}
    roots = _roots(by_id)
    groups: dict[int, list[tuple[datetime, int, JsonObject]]] = {}
    for cid, c in by_id.items():
        groups.setdefault(roots[cid], []).append((c.time("created_at"), cid, c))
    threads = []
    for root_id, items in groups.items():
        items.sort(key=lambda item: (item[0], item[1]))
        tid = f"{REVIEW}{root_id}"
        state = states.get(root_id)
        first = by_id.get(root_id, items[0][2])
        threads.append(Thread(
            id=tid, messages=tuple(review_message(c, tid) for _, _, c in items),
            anchor=review_anchor(first), resolvable=True,
            resolved=state.resolved if state else False))
    return threads


def merge_request(key: MRKey, pr: JsonObject) -> MergeRequest:
    state = pr.text_or("state", "open")
    head, base = pr.obj_or_none("head"), pr.obj_or_none("base")
    base_sha = base.text_or("sha") if base else ""
    return MergeRequest(
        key=key, title=pr.text_or("title"), description=pr.text_or("body"),
        author=actor(pr.obj_or_none("user")),
        source_branch=head.text_or("ref") if head else "",
        target_branch=base.text_or("ref") if base else "",
        state="opened" if state == "open" else "merged" if pr.has("merged_at") else "closed",
        head_sha=head.text_or("sha") if head else "", base_sha=base_sha, start_sha=base_sha,
        web_url=pr.text_or("html_url"), created_at=pr.time("created_at"),
        updated_at=pr.time("updated_at"),
        # https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request: users asked, and
        # not yet reviewed since (teams are no account the bot could be)
        reviewers=tuple(Actor(str(u.number("id")), u.text_or("login"))
                        for u in pr.objects("requested_reviewers")))


def to_commit(c: JsonObject) -> Commit:
    detail = c.obj("commit")
    committer, author = detail.obj_or_none("committer"), detail.obj_or_none("author")
    dated = committer if committer is not None and committer.has("date") else author
    if dated is None:
        raise detail.error("committer", "missing (and no author either)")
    # The account (`author.login`) where GitHub matched one, else the git author's name.
    account = c.obj_or_none("author")
    name = (account.text_or("login") if account is not None else "") or (
        author.text_or("name") if author is not None else "")
    message = detail.text_or("message")
    return Commit(sha=c.token("sha"), title=message.split("\n", 1)[0],
                  created_at=dated.time("date"),
                  parent_ids=tuple(p.token("sha") for p in c.objects("parents")),
                  message=message, author=name)


def unified_diff(files: list[JsonObject]) -> str:
    """GitHub's per-file `patch` (hunks only) as one diff; files without one (binary, too
    large) are left out."""
    out = []
    for f in files:
        patch = f.text_or("patch")
        if not patch:
            continue
        new = f.text("filename")
        old = f.text_or("previous_filename") or new
        out.append(f"--- a/{old}\n+++ b/{new}\n{patch}" + ("" if patch.endswith("\n") else "\n"))
    return "".join(out)


def conversation(issue_comments: list[JsonObject], review_comments: list[JsonObject],
                 reviews: list[JsonObject], states: dict[int, ThreadState]) -> list[Thread]:
    """A pull request's threads, oldest first: each issue comment, each submitted review's
    non-empty body (a pending review is its author's draft), each review thread."""
    threads = [issue_thread(c) for c in issue_comments]
    threads += [review_body_thread(r) for r in reviews
                if r.text_or("body").strip() and r.text_or("state") != "PENDING"]
    threads += review_threads(review_comments, states)
    threads.sort(key=lambda t: (t.messages[0].created_at, t.id))
    return threads
