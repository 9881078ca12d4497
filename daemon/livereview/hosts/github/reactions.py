"""GitHub: reactions — who reacted to a comment (REST, read only for comments whose
`reactions` rollup counts some) and adding one (REST on a comment; GraphQL `addReaction` on
a review's body, which has no REST endpoint). GitHub answers 200 instead of 201 when the
reaction exists already: success.

Docs: https://docs.github.com/en/rest/reactions/reactions,
https://docs.github.com/en/graphql/reference/mutations#addreaction.
"""

from __future__ import annotations

from dataclasses import replace

from livereview.core.model import MRKey, Reaction, Thread
from livereview.hosts.base import ReactionRefused
from livereview.hosts.github.graphql import REACTION_ENUM, GraphQL
from livereview.hosts.github.payloads import ISSUE, REVIEW, REVIEW_BODY, actor, parse_id
from livereview.hosts.github.rest import every_item, pull_path, repo_path
from livereview.hosts.http import HttpClient
from livereview.hosts.payload import JsonObject
from livereview.hosts.reactions import GITHUB_CONTENTS


def _unreacted(comment: JsonObject) -> bool:
    """Whether a comment's `reactions` rollup says nobody reacted (no list to read)."""
    rollup = comment.obj_or_none("reactions")
    return rollup is not None and rollup.number_or_none("total_count") == 0


def unreacted_ids(issue_comments: list[JsonObject], review_comments: list[JsonObject]
                  ) -> set[str]:
    """Ids of the comments nobody reacted to: a comment carries only counts (its
    `reactions` rollup), and none means no list to read."""
    found = {f"{ISSUE}{c.number('id')}" for c in issue_comments if _unreacted(c)}
    return found | {f"{REVIEW}{c.number('id')}" for c in review_comments if _unreacted(c)}


class Reactions:
    """Reads and adds reactions; knows the node id of each review seen (for addReaction)."""

    def __init__(self, http: HttpClient, graphql: GraphQL) -> None:
        self.http = http
        self.graphql = graphql
        self._review_nodes: dict[int, str] = {}  # review id → node id (for addReaction)

    def learn(self, reviews: list[JsonObject]) -> None:
        self._review_nodes.update({r.number("id"): r.text("node_id") for r in reviews
                                   if r.has("node_id")})

    async def read(self, key: MRKey, thread: Thread, ids: frozenset[str]) -> Thread:
        """Who reacted how, for the messages in `ids`."""
        if not any(m.id in ids for m in thread.messages):
            return thread
        messages = []
        for m in thread.messages:
            if m.id in ids:
                kind, number = parse_id(m.id)
                if kind != REVIEW_BODY:  # the bot's own messages are never review bodies
                    where = "issues" if kind == ISSUE else "pulls"
                    found = await every_item(
                        self.http, f"{repo_path(key.repo)}/{where}/comments/{number}/reactions")
                    m = replace(m, reactions=tuple(
                        Reaction(r.text("content"), actor(r.obj_or_none("user")),
                                 str(r.number("id")), r.time_or_none("created_at"))
                        for r in found))
            messages.append(m)
        return replace(thread, messages=tuple(messages))

    async def add(self, key: MRKey, message_id: str, emoji: str) -> None:
        content = GITHUB_CONTENTS.get(emoji)
        if content is None:  # a fixed set: no request could make it one
            raise ReactionRefused(f"{emoji!r} is not one of GitHub's reactions "
                                  f"({', '.join(REACTION_ENUM)})")
        kind, number = parse_id(message_id)
        if kind == REVIEW_BODY:  # no REST endpoint for reactions on reviews
            node = self._review_nodes.get(number) or (await self.http.one(
                "GET", f"{pull_path(key)}/reviews/{number}")).text("node_id")
            await self.graphql.add_reaction(node, content)
            return
        where = "issues" if kind == ISSUE else "pulls"
        await self.http.request("POST", f"{repo_path(key.repo)}/{where}/comments/{number}"
                                "/reactions", json={"content": content})
