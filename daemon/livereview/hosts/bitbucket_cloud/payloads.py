"""Bitbucket Cloud's REST 2.0 JSON → the review model: pure functions, no I/O.

A pull request's comments arrive as one flat list; a comment with `parent.id` is a reply,
and a top-level comment with every reply below it (at any depth) is one Thread, named by
the top-level comment's id and flattened in the order the replies were written. A thread
whose first comment has `inline {path, from, to}` is anchored to a line of the diff.
Shapes: https://developer.atlassian.com/cloud/bitbucket/rest/api-group-pullrequests/
(the `pullrequest`, `pullrequest_comment`, `account`/`user`/`app_user` and `participant`
schemas).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from livereview.core.model import Actor, Anchor, Commit, MergeRequest, Message, MRKey, Thread
from livereview.hosts.payload import JsonObject

# How Bitbucket Cloud stores a mention picked from its autocomplete: the account id in braces.
_MENTION = re.compile(r"@\{([A-Za-z0-9:_-]{1,128})\}")
_STATES = {"OPEN": "opened", "MERGED": "merged", "DECLINED": "closed", "SUPERSEDED": "closed"}


@dataclass(frozen=True)
class Me:
    """Who the bot is, as far as the adapter knows: its account uuid once seen (always with
    Basic auth; an access token's bot user is learned from the first comment it posts), its
    name, and whether it is an access token's bot user (an `app_user`)."""

    uuid: str | None
    name: str
    app_user: bool
    account_id: str = ""


class Accounts:
    """Reads accounts of one response: who wrote what, and `@{account-id}` mentions as
    `@name` for the bot and the accounts the pull request shows."""

    def __init__(self, me: Me | None) -> None:
        self.me = me
        self._names: dict[str, str] = {me.account_id: me.name} if me and me.account_id else {}

    def actor(self, user: JsonObject | None) -> Actor:
        """An account. `app_user` (an access token's bot user, an app) is automated; a
        deleted account is null. Nicknames are not unique on Bitbucket (its own schema says
        so): another account with the bot's name gets its id appended, so nothing that
        compares names can take it for the bot."""
        if user is None:
            return Actor("0", "former-user", "Former user")
        kind = user.text_or("type", "user")
        uuid = user.text_or("uuid") or user.text_or("account_id")
        display = user.text_or("display_name")
        name = (user.text_or("nickname") if kind == "user" else "") or display or uuid
        uuid = uuid or f"name:{name}"
        if (self.me is not None and name.lower() == self.me.name.lower()
                and not self._is_me(uuid, kind)):
            name = f"{name}~{uuid.strip('{}')[:8]}"
        account_id = user.text_or("account_id")
        if account_id:
            self._names.setdefault(account_id, name)
        return Actor(uuid, name or "unknown", display, kind in ("app_user", "team"))

    def _is_me(self, uuid: str, kind: str) -> bool:
        assert self.me is not None
        if self.me.uuid is not None:
            return uuid == self.me.uuid
        return self.me.app_user and kind == "app_user"

    def readable(self, raw: str) -> str:
        """`@{557058:…}` → `@nickname` for accounts seen so far (others stay as they are)."""
        if "@{" not in raw:
            return raw
        return _MENTION.sub(lambda m: f"@{self._names[m[1]]}" if m[1] in self._names
                            else m[0], raw)


def comment_id(comment: JsonObject) -> str:
    return str(comment.number("id"))


def parent_id(comment: JsonObject) -> str | None:
    parent = comment.obj_or_none("parent")
    return str(parent.number("id")) if parent is not None else None


def message(comment: JsonObject, thread_id: str, accounts: Accounts) -> Message:
    created = comment.time("created_on")
    content = comment.obj_or_none("content")
    body = content.text_or("raw") if content is not None else ""
    return Message(id=comment_id(comment), thread_id=thread_id,
                   author=accounts.actor(comment.obj_or_none("user")),
                   body=accounts.readable(body), created_at=created,
                   updated_at=comment.time_or_none("updated_on") or created)


def _roots(by_id: dict[str, JsonObject]) -> dict[str, str]:
    """Each comment's top-level comment, following `parent.id` (to a comment missing from
    the list, whose id then names the thread). Memoized, so linear in the comments even if
    a payload chains replies deeply or loops."""
    roots: dict[str, str] = {}
    for start in by_id:
        chain, node, seen = [], start, set()
        while node not in roots:
            c = by_id.get(node)
            parent = parent_id(c) if c is not None else None
            if parent is None or node in seen:
                roots[node] = node
                break
            seen.add(node)
            chain.append(node)
            node = parent
        for n in chain:
            roots[n] = roots[node]
    return roots


@dataclass(frozen=True)
class Heads:
    """The pull request's head then and now: the current head (full hash), and for comments
    Bitbucket marks `outdated` (their lines are those of the version they were written on)
    the head each comment was written at, read from the order of the activity log (where
    pushes are `update` entries), else the last update before the comment's time."""

    current: str
    at_comment: Mapping[str, str] = field(default_factory=dict)
    updates: tuple[tuple[datetime, str], ...] = ()

    def of(self, comment: str, when: datetime) -> str:
        if comment in self.at_comment:
            return self.at_comment[comment]
        index = bisect_right([d for d, _ in self.updates], when)
        return self.updates[max(index - 1, 0)][1] if self.updates else self.current


def anchor(comment: JsonObject, heads: Heads) -> Anchor | None:
    """Where an inline comment points: `to` is a line of the new file, `from` of the old
    one; a comment on a whole file has neither (an anchor with no line)."""
    inline = comment.obj_or_none("inline")
    if inline is None:
        return None
    new, old = inline.number_or_none("to"), inline.number_or_none("from")
    path = inline.text("path")
    head = (heads.of(comment_id(comment), comment.time("created_on"))
            if inline.flag("outdated") else heads.current)
    return Anchor(new_path=path, old_path=path, new_line=new, old_line=old if new is None
                  else None, base_sha="", start_sha="", head_sha=head)


def threads(comments: list[JsonObject], accounts: Accounts, heads: Heads) -> list[Thread]:
    """Top-level comments with their reply trees; deleted comments leave their replies in
    the thread but are not messages themselves."""
    by_id = {comment_id(c): c for c in comments}
    roots = _roots(by_id)
    groups: dict[str, list[tuple[datetime, int, JsonObject]]] = {}
    for cid, c in by_id.items():
        groups.setdefault(roots[cid], []).append((c.time("created_on"), int(cid), c))
    out = []
    for root_id, items in groups.items():
        items.sort(key=lambda item: (item[0], item[1]))
        messages = tuple(message(c, root_id, accounts) for _, _, c in items
                         if not c.flag("deleted"))
        if not messages:
            continue
        root = by_id.get(root_id)
        where = anchor(root, heads) if root is not None else None
        inline = root is not None and root.has("inline")
        # Only threads on the code can be resolved (Bitbucket answers 403 for the others).
        out.append(Thread(id=root_id, messages=messages, anchor=where, resolvable=inline,
                          resolved=inline and root is not None and root.has("resolution")))
    out.sort(key=lambda t: (t.messages[0].created_at, t.id))
    return out


def short_hash(endpoint: JsonObject | None) -> str:
    """A pull request end's commit hash (Bitbucket sends 12 characters)."""
    commit = endpoint.obj_or_none("commit") if endpoint is not None else None
    return commit.token("hash") if commit is not None else ""


def full_hash(short: str, commits: list[Commit]) -> str:
    """The full hash of a commit of the pull request that `short` abbreviates, else `short`
    (a head rewritten by a force-push is no longer among the commits)."""
    if not short:
        return short
    return next((c.sha for c in commits if c.sha.startswith(short)), short)


def merge_request(key: MRKey, pr: JsonObject, commits: list[Commit], accounts: Accounts
                  ) -> MergeRequest:
    source, destination = pr.obj_or_none("source"), pr.obj_or_none("destination")
    summary = pr.obj_or_none("summary")
    description = summary.text_or("raw") if summary is not None else pr.text_or("description")
    branch = {side: (end.obj_or_none("branch") if end is not None else None)
              for side, end in (("source", source), ("destination", destination))}
    links = pr.obj_or_none("links")
    html = links.obj_or_none("html") if links is not None else None
    base = short_hash(destination)
    return MergeRequest(
        key=key, title=pr.text_or("title"), description=accounts.readable(description),
        author=accounts.actor(pr.obj_or_none("author")),
        source_branch=branch["source"].text_or("name") if branch["source"] else "",
        target_branch=branch["destination"].text_or("name") if branch["destination"] else "",
        state=_STATES.get(pr.text_or("state", "OPEN"), "closed"),
        head_sha=full_hash(short_hash(source), commits), base_sha=base, start_sha=base,
        web_url=html.text_or("href") if html is not None else "",
        created_at=pr.time("created_on"), updated_at=pr.time("updated_on"),
        # the pull request's `reviewers` (accounts), as `actor` names them
        reviewers=tuple(Actor(a.id, a.username) for a in map(accounts.actor,
                                                              pr.objects("reviewers"))))


def commit(c: JsonObject) -> Commit:
    message = c.text_or("message")
    return Commit(sha=c.token("hash"), title=message.split("\n", 1)[0],
                  created_at=c.time("date"),
                  parent_ids=tuple(p.token("hash") for p in c.objects("parents")),
                  message=message, author=_commit_author(c.obj_or_none("author")))


def _commit_author(author: JsonObject | None) -> str:
    """The linked account's display name, else the git author (`raw` is "Name <e-mail>":
    the name only)."""
    if author is None:
        return ""
    user = author.obj_or_none("user")
    if user is not None and user.text_or("display_name"):
        return user.text_or("display_name")
    return author.text_or("raw").split("<", 1)[0].strip()


def newest_first(commits: list[Commit], head: str) -> list[Commit]:
    """By date, newest first, the head first of all (Bitbucket's order is not documented
    beyond "chronological"; equal dates keep the API's order)."""
    ordered = sorted(commits, key=lambda c: c.created_at, reverse=True)
    found = [c for c in ordered if head and c.sha.startswith(head)]
    return found[:1] + [c for c in ordered if c not in found[:1]]


def history(activity: list[JsonObject]) -> tuple[dict[str, str],
                                                 tuple[tuple[datetime, str], ...]]:
    """From a pull request's activity log: the head (short hash) each comment was written
    at, by the order of the log, and (date, head) of each update. The log comes newest
    first; one that comes oldest first (its dates say so) is read as it is."""
    dates = [e.time("date") for entry in activity
             if (e := entry.obj_or_none("update")) is not None and e.has("date")]
    oldest_first = len(dates) > 1 and dates[0] < dates[-1]
    at_comment: dict[str, str] = {}
    updates = []
    head = ""
    for entry in activity if oldest_first else reversed(activity):
        update, comment = entry.obj_or_none("update"), entry.obj_or_none("comment")
        if update is not None:
            head = short_hash(update.obj_or_none("source")) or head
            if update.has("date"):
                updates.append((update.time("date"), head))
        elif comment is not None and head:
            at_comment[comment_id(comment)] = head
    return at_comment, tuple(sorted(updates))
