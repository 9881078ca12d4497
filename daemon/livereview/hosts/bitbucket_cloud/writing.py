"""Bitbucket Cloud: comments, replies, reactions (none) and resolving (mixed into the
adapter).

Docs: https://developer.atlassian.com/cloud/bitbucket/rest/api-group-pullrequests/
#api-repositories-workspace-repo-slug-pullrequests-pull-request-id-comments-post: an inline
comment's `inline` is `{path, from, to}` — `to` a line of the new file, `from` of the old
one, and neither: a comment on the whole file. A comment has one line: a range is no
Bitbucket Cloud concept, so a range's comment sits on its last line and its text begins by
naming the lines it covers (docs/agent-tools.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from livereview.core.model import Anchor, Message, MRKey
from livereview.hosts.base import Conflict, Forbidden, NotFound
from livereview.hosts.bitbucket_cloud import payloads
from livereview.hosts.bitbucket_cloud.budget import Use
from livereview.hosts.payload import JsonObject

if TYPE_CHECKING:
    import httpx2


def inline(anchor: Anchor) -> dict[str, Any]:
    """`inline` of a comment on `anchor`: its line, or no line for the whole file."""
    where: dict[str, Any] = {"path": anchor.new_path or anchor.old_path}
    if anchor.new_line is not None:
        where["to"] = anchor.new_line
    elif anchor.old_line is not None:
        where["from"] = anchor.old_line
    return where


def ranged(body: str, anchor: Anchor | None) -> str:
    """The text of a comment on a range, which Cloud anchors at the range's last line:
    it says first which lines it is about (the side's numbers, as the diff shows them)."""
    if anchor is None or anchor.start_line is None:
        return body
    side = "" if anchor.new_line is not None else " (old file)"
    return f"**Lines {anchor.start_line}–{anchor.line}{side}:**\n\n{body}"


class BitbucketCloudWrites:
    """The Host protocol's writes on Bitbucket Cloud (mixed into the adapter)."""

    if TYPE_CHECKING:
        def _pr(self, key: MRKey) -> str: ...

        async def _one(self, method: str, path: str, use: Use = Use.READ, *,
                       conditional: bool = False, **kwargs: Any) -> JsonObject: ...

        async def _request(self, method: str, path: str, use: Use, **kwargs: Any
                           ) -> httpx2.Response: ...

        def _forget(self, key: MRKey) -> None: ...

        def _learn(self, posted: JsonObject) -> None: ...

        def _accounts(self) -> payloads.Accounts: ...

    async def _post_comment(self, key: MRKey, payload: dict[str, Any]) -> JsonObject:
        self._forget(key)  # before the POST: its answer may be lost
        posted = await self._one("POST", f"{self._pr(key)}/comments", Use.WRITE, json=payload)
        self._learn(posted)
        return posted

    async def reply(self, key: MRKey, thread_id: str, body: str) -> Message:
        """A reply under the thread's first comment (`parent.id`)."""
        if not thread_id.isdigit():
            raise NotFound(f"{thread_id}: not a Bitbucket comment id")
        posted = await self._post_comment(key, {"content": {"raw": body},
                                                "parent": {"id": int(thread_id)}})
        return payloads.message(posted, thread_id, self._accounts())

    async def comment(self, key: MRKey, body: str, anchor: Anchor | None = None) -> Message:
        payload: dict[str, Any] = {"content": {"raw": ranged(body, anchor)}}
        if anchor is not None:
            payload["inline"] = inline(anchor)
        posted = await self._post_comment(key, payload)
        return payloads.message(posted, payloads.comment_id(posted), self._accounts())

    async def react(self, key: MRKey, message_id: str, emoji: str) -> None:
        raise Forbidden("Bitbucket Cloud has no reactions API (acknowledged by a reply instead)")

    async def resolve(self, key: MRKey, thread_id: str, resolved: bool = True) -> None:
        """Resolve or reopen a thread on the code (Bitbucket answers 403 for others). Already
        so is success: resolving twice is a 409, reopening an open thread a 404."""
        self._forget(key)
        path = f"{self._pr(key)}/comments/{thread_id}/resolve"
        try:
            await self._request("POST" if resolved else "DELETE", path, Use.WRITE)
        except Conflict:
            if not resolved:
                raise
        except NotFound:
            if resolved:
                raise
            comment = await self._one("GET", f"{self._pr(key)}/comments/{thread_id}")
            if comment.has("resolution"):
                raise
