"""Bitbucket Data Center / Server REST 1.0 JSON → the review model: pure functions, no I/O.

A pull request's conversation is its `COMMENTED` activities: each carries a comment as it
is now, with its replies nested in `comments` (a reply tree of any depth). A thread here is
a root comment and every reply below it, in the order they were written; ids are
Bitbucket's comment ids. Timestamps are epoch milliseconds.

Docs (REST API 9.x reference, developer.atlassian.com/server/bitbucket/rest/):
api-group-pull-requests (pull requests, activities, comments, participants),
api-group-repository (raw, browse, diff), api-group-system-maintenance (users,
application properties).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from livereview.core.model import (
    Actor,
    Anchor,
    ChangedMR,
    Commit,
    MergeRequest,
    Message,
    MRKey,
    Reaction,
    Thread,
)
from livereview.hosts.base import BadResponse
from livereview.hosts.payload import MAX_YEAR, MIN_YEAR, JsonObject

MAX_DEPTH = 1_000  # reply trees deeper than this are cut (a hostile server's recursion)
# Bitbucket escapes HTML in Markdown ("all HTML tags are escaped", Markdown syntax guide:
# https://confluence.atlassian.com/bitbucketserver/markdown-syntax-guide-776639995.html), so
# the hidden comment the bot ends its posts with would show as text. A CommonMark link
# reference definition renders as nothing: the last line travels in that form and is read
# back as the comment it stands for.
_HIDDEN_LAST = re.compile(r"(\A|\n)<!-- ([^()<>\n]{1,200}) -->([ \t\n]*)\Z")
_INVISIBLE_LAST = re.compile(r"(\A|\n)\[//\]: # \(([^()<>\n]{1,200})\)([ \t\n]*)\Z")
_STATES = {"OPEN": "opened", "MERGED": "merged", "DECLINED": "closed"}


def stamp(data: JsonObject, key: str) -> datetime:
    """An epoch-milliseconds timestamp (`createdDate`, `updatedDate`, …)."""
    millis = data.number(key)
    try:
        when = datetime.fromtimestamp(millis / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        raise data.error(key, "not an epoch-milliseconds timestamp") from None
    # Time arithmetic on a far-future date (a watermark plus its overlap) overflows: a date
    # no server writes is a bad answer, as payload.JsonObject.time says of ISO timestamps.
    if not MIN_YEAR <= when.year <= MAX_YEAR:
        raise data.error(key, f"a timestamp in the year {when.year}")
    return when


def actor(user: JsonObject | None) -> Actor:
    """A user. `type: "SERVICE"` is the account behind a project or repository HTTP access
    token: automated by definition (RestApplicationUser, api-group-pull-requests)."""
    if user is None:
        return Actor("0", "unknown", "Unknown")
    name = user.text_or("name") or user.text("slug")
    return Actor(str(user.number("id")), name, user.text_or("displayName"),
                 user.text_or("type") == "SERVICE")


def file_path(data: JsonObject, key: str) -> str:
    """A file path: a string in comment anchors, or a RestPath object (`toString`, else its
    `components` joined by "/") where the 9.x OpenAPI description shows one."""
    if not data.has(key):
        return ""
    try:
        return data.text(key)
    except BadResponse:  # not a string: the object form
        path = data.obj(key)
    return path.text_or("toString") or "/".join(path.texts("components"))


def anchor(data: JsonObject | None, head_fallback: str = "") -> Anchor | None:
    """Where an inline comment points. `fileType: FROM` / `lineType: REMOVED` is a line of
    the old side; anything else a line of the new side; no `line` is a comment on a whole
    file. `toHash` is the source head the comment was written on, `fromHash` the base."""
    if data is None or not data.has("path"):
        return None
    path = file_path(data, "path")
    old_path = file_path(data, "srcPath") or path
    line = data.number_or_none("line")
    old_side = data.text_or("fileType") == "FROM" or data.text_or("lineType") == "REMOVED"
    base = data.text_or("fromHash")
    marker = data.obj_or_none("multilineMarker") if line is not None else None
    start = marker.number_or_none("startLine") if marker is not None else None
    return Anchor(new_path=path, old_path=old_path,
                  new_line=None if old_side else line, old_line=line if old_side else None,
                  base_sha=base, start_sha=base,
                  head_sha=data.text_or("toHash") or head_fallback,
                  start_new_line=None if old_side else start,
                  start_old_line=start if old_side else None)


def _line_type(new_line: int | None, old_line: int | None) -> str:
    return "CONTEXT" if new_line is not None and old_line is not None else (
        "ADDED" if new_line is not None else "REMOVED")


def comment_anchor(anchor: Anchor) -> dict[str, object]:
    """A new comment's `anchor` (REST "Add pull request comment", RestCommentThreadDiffAnchor):
    `path` alone is the whole file; `line` with `lineType` (ADDED, REMOVED, CONTEXT) and
    `fileType` (FROM: the old file's numbers, TO: the new file's) a line; a range adds
    `multilineMarker {startLine, startLineType}`, its first line in the same numbering
    (Data Center's multi-line comments; a server without them shows the last line)."""
    where: dict[str, object] = {
        "diffType": "EFFECTIVE", "path": anchor.new_path,
        "srcPath": anchor.old_path or anchor.new_path,
        "fromHash": anchor.base_sha, "toHash": anchor.head_sha}
    if anchor.whole_file:
        return where
    old_side = anchor.new_line is None
    where.update(line=anchor.line, fileType="FROM" if old_side else "TO",
                 lineType=_line_type(anchor.new_line, anchor.old_line))
    if anchor.start_line is not None:
        where["multilineMarker"] = {
            "startLine": anchor.start_line,
            "startLineType": _line_type(anchor.start_new_line, anchor.start_old_line)}
    return where


def reactions(comment: JsonObject) -> tuple[Reaction, ...]:
    """`properties.reactions`: one entry per emoticon with the users who chose it (the
    comment-likes plugin of Data Center 7+; the OpenAPI leaves `properties` open)."""
    props = comment.obj_or_none("properties")
    if props is None:
        return ()
    found = []
    for entry in props.objects("reactions"):
        emoticon = entry.obj("emoticon")
        name = emoticon.text_or("shortcut") or emoticon.text("value")
        found += [Reaction(name, actor(user), f"{name}:{user.number('id')}")
                  for user in entry.objects("users")]
    return tuple(found)


def outgoing(text: str) -> str:
    """The text to post: a trailing hidden comment as an invisible link definition."""
    return _HIDDEN_LAST.sub(r"\1[//]: # (\2)\3", text, count=1)


def incoming(text: str) -> str:
    """The text as posted: a trailing invisible link definition as the hidden comment."""
    return _INVISIBLE_LAST.sub(r"\1<!-- \2 -->\3", text, count=1)


def message(comment: JsonObject, thread_id: str, with_reactions: bool = False) -> Message:
    created = stamp(comment, "createdDate")
    updated = stamp(comment, "updatedDate") if comment.has("updatedDate") else created
    return Message(id=str(comment.number("id")), thread_id=thread_id,
                   author=actor(comment.obj_or_none("author")),
                   body=incoming(comment.text_or("text")),
                   created_at=created, updated_at=updated,
                   reactions=reactions(comment) if with_reactions else ())


def _walk(root: JsonObject) -> Iterator[tuple[JsonObject, str | None]]:
    """Every comment of a reply tree with its parent's id, depth-first, without recursion
    (a thread of 100 000 replies, or one nested that deep, must not blow the stack)."""
    stack: list[tuple[JsonObject, str | None, int]] = [(root, None, 0)]
    while stack:
        node, parent, depth = stack.pop()
        yield node, parent
        if depth < MAX_DEPTH:
            node_id = str(node.number("id"))
            stack += [(child, node_id, depth + 1) for child in reversed(node.objects("comments"))]


def threads(roots: Iterable[tuple[JsonObject, JsonObject | None]], head: str,
            with_reactions: frozenset[str] = frozenset(), deleted: frozenset[str] = frozenset()
            ) -> list[Thread]:
    """Threads from comments as activities carry them: (comment, activity commentAnchor).

    A comment can come more than once (its own activity, and nested in its root's tree; an
    edit is one more activity): the copy with the highest `version` wins, and a comment is
    a reply wherever some tree nests it. Deleted comments (a `DELETED` activity) are left
    out. Linear in the number of comments."""
    best: dict[str, tuple[int, JsonObject]] = {}
    parent_of: dict[str, str] = {}
    anchors: dict[str, JsonObject] = {}
    for top, activity_anchor in roots:
        for node, parent in _walk(top):
            cid = str(node.number("id"))
            version = node.number_or_none("version") or 0
            if cid not in best or best[cid][0] < version:
                best[cid] = (version, node)
            if parent is not None:
                parent_of[cid] = parent
        where = top.obj_or_none("anchor") or activity_anchor
        if where is not None:
            anchors.setdefault(str(top.number("id")), where)
    root_of: dict[str, str] = {}
    for cid in best:
        chain: list[str] = []
        at, seen = cid, set()
        while at not in root_of and at in parent_of and at not in seen:
            seen.add(at)
            chain.append(at)
            at = parent_of[at]
        root = root_of.get(at, at)
        for n in (*chain, at):
            root_of[n] = root
    members: dict[str, list[JsonObject]] = {}
    for cid, (_, comment) in best.items():
        if cid not in deleted:
            members.setdefault(root_of[cid], []).append(comment)
    out = []
    for root_id, nodes in members.items():
        messages = sorted((message(n, root_id, str(n.number("id")) in with_reactions)
                           for n in nodes), key=lambda m: (m.created_at, int(m.id)))
        first = best[root_id][1]
        out.append(Thread(id=root_id, messages=tuple(messages),
                          anchor=anchor(first.obj_or_none("anchor") or anchors.get(root_id),
                                        head),
                          resolvable=first.has("threadResolved"),
                          resolved=first.flag("threadResolved")))
    out.sort(key=lambda t: (t.messages[0].created_at, int(t.id)))
    return out


def merge_request(key: MRKey, pr: JsonObject) -> MergeRequest:
    source, target = pr.obj("fromRef"), pr.obj("toRef")
    author = pr.obj_or_none("author")
    links = pr.obj_or_none("links")
    web = links.objects("self") if links is not None else []
    head, base = source.text_or("latestCommit"), target.text_or("latestCommit")
    return MergeRequest(
        key=key, title=pr.text_or("title"), description=pr.text_or("description"),
        author=actor(author.obj_or_none("user") if author is not None else None),
        source_branch=source.text_or("displayId"), target_branch=target.text_or("displayId"),
        state=_STATES.get(pr.text_or("state", "OPEN"), "closed"),
        head_sha=head, base_sha=base, start_sha=base,
        web_url=web[0].text_or("href") if web else "",
        created_at=stamp(pr, "createdDate"), updated_at=stamp(pr, "updatedDate"),
        # `reviewers`: participants with role REVIEWER (RestPullRequest, api-group-pull-
        # requests); those who only commented are `participants`, never asked
        reviewers=tuple(Actor(a.id, a.username) for a in (
            actor(r.obj_or_none("user")) for r in pr.objects("reviewers")
            if r.text_or("role", "REVIEWER") == "REVIEWER")))


def changed_mr(repo: str, pr: JsonObject) -> ChangedMR:
    state = _STATES.get(pr.text_or("state", "OPEN"), "closed")
    return ChangedMR(repo, pr.number("id"), stamp(pr, "updatedDate"), state)


def target_repo(pr: JsonObject) -> str:
    """`PROJECT_KEY/slug` of the repository a pull request merges into (`toRef`), "" when
    the payload does not say. The dashboard lists pull requests of every repository the
    bot can read: the name is only compared with the watched ones, so one odd entry of a
    repository nobody watches does not stop the rest being read."""
    ref = pr.obj_or_none("toRef")
    repo = ref.obj_or_none("repository") if ref is not None else None
    project = repo.obj_or_none("project") if repo is not None else None
    if repo is None or project is None:
        return ""
    return f"{project.text_or('key')}/{repo.text_or('slug')}"


def commit(c: JsonObject) -> Commit:
    key = "committerTimestamp" if c.has("committerTimestamp") else "authorTimestamp"
    message, author = c.text_or("message"), c.obj_or_none("author")
    name = (author.text_or("displayName") or author.text_or("name")) if author else ""
    return Commit(sha=c.token("id"), title=message.split("\n", 1)[0],
                  created_at=stamp(c, key),
                  parent_ids=tuple(p.token("id") for p in c.objects("parents")),
                  message=message, author=name)


def unified_diff(raw: str) -> str:
    """Bitbucket's raw diffs name the sides `src://path` and `dst://path`; the rest of the
    daemon reads git's `a/` and `b/`."""
    out = []
    for line in raw.splitlines(keepends=True):
        if line.startswith("diff --git "):
            line = line.replace(" src://", " a/").replace(" dst://", " b/")
        elif line.startswith("--- src://"):
            line = "--- a/" + line[len("--- src://"):]
        elif line.startswith("+++ dst://"):
            line = "+++ b/" + line[len("+++ dst://"):]
        out.append(line)
    return "".join(out)
