"""The little GraphQL the GitHub adapter needs: review threads (their node ids and whether
they are resolved — REST has neither), resolveReviewThread / unresolveReviewThread, and
addReaction for review bodies (REST has no reactions endpoint for reviews).

GraphQL lives at https://api.github.com/graphql, and on GitHub Enterprise Server at
https://HOST/api/graphql beside the REST base https://HOST/api/v3.
https://docs.github.com/en/graphql/guides/forming-calls-with-graphql#the-graphql-endpoint
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from livereview.hosts.base import BadResponse, Forbidden, HostError, NotFound, RateLimited
from livereview.hosts.http import HttpClient
from livereview.hosts.payload import JsonObject, json_object

REVIEW_THREADS = """
query ReviewThreads($owner: String!, $name: String!, $number: Int!, $after: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $after) {
        nodes { id isResolved comments(first: 1) { nodes { %s } } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
}"""

SET_RESOLVED = """
mutation SetResolved($threadId: ID!) {
  %s(input: {threadId: $threadId}) { thread { id isResolved } }
}"""

ADD_REACTION = """
mutation AddReaction($subjectId: ID!, $content: ReactionContent!) {
  addReaction(input: {subjectId: $subjectId, content: $content}) { reaction { content } }
}"""

# REST reaction names → GraphQL's ReactionContent enum.
REACTION_ENUM = {"+1": "THUMBS_UP", "-1": "THUMBS_DOWN", "laugh": "LAUGH", "hooray": "HOORAY",
                 "confused": "CONFUSED", "heart": "HEART", "rocket": "ROCKET", "eyes": "EYES"}


def graphql_url(api_url: str) -> str:
    """The GraphQL endpoint beside a REST base: …/api/v3 → …/api/graphql, else …/graphql."""
    base = api_url.rstrip("/")
    if base.endswith("/api/v3"):
        return base[: -len("/v3")] + "/graphql"
    return base + "/graphql"


@dataclass(frozen=True)
class ThreadState:
    node_id: str
    resolved: bool


def _fail(error: JsonObject, what: str) -> HostError:
    kind, message = error.text_or("type"), error.text_or("message")[:200]
    text = f"GraphQL {what}: {kind or 'error'}: {message}"
    if kind == "NOT_FOUND":
        return NotFound(text)
    if kind in ("FORBIDDEN", "INSUFFICIENT_SCOPES"):
        return Forbidden(text)
    if kind == "RATE_LIMITED":
        return RateLimited(text, 60.0)
    return BadResponse(text)


class GraphQL:
    def __init__(self, http: HttpClient, url: str) -> None:
        self.http = http
        self.url = url
        # A comment's REST id: fullDatabaseId (a BigInt string; REST ids outgrew GraphQL's
        # 32-bit Int), or databaseId on a GitHub Enterprise Server too old to know it.
        self.id_field = "fullDatabaseId"

    async def run(self, what: str, query: str, variables: dict[str, Any]) -> JsonObject:
        """`data` of one query; GraphQL errors (HTTP 200 with `errors`) become HostErrors."""
        answer = json_object(await self.http.json(
            "POST", self.url, json={"query": query, "variables": variables}), f"GraphQL {what}")
        errors = answer.objects("errors")
        if errors:
            raise _fail(errors[0], what)
        return answer.obj("data")

    async def review_threads(self, repo: str, number: int) -> dict[int, ThreadState]:
        """Per review thread, keyed by its first comment's REST id: node id and resolution."""
        owner, name = repo.split("/", 1)
        threads: dict[int, ThreadState] = {}
        after: str | None = None
        while True:
            variables = {"owner": owner, "name": name, "number": number, "after": after}
            try:
                data = await self.run("reviewThreads", REVIEW_THREADS % self.id_field,
                                      variables)
            except BadResponse as exc:
                if self.id_field != "fullDatabaseId" or "fullDatabaseId" not in str(exc):
                    raise
                self.id_field = "databaseId"
                continue
            repository = data.obj_or_none("repository")
            pull = repository.obj_or_none("pullRequest") if repository else None
            page = pull.obj_or_none("reviewThreads") if pull else None
            if page is None:
                return threads
            for node in page.objects("nodes"):
                comments = node.obj_or_none("comments")
                first = next(iter(comments.objects("nodes")), None) if comments else None
                if first is not None and first.has(self.id_field):
                    rest_id = first.token(self.id_field)
                    if rest_id.isdigit():
                        threads[int(rest_id)] = ThreadState(node.text("id"),
                                                            node.flag("isResolved"))
            info = page.obj_or_none("pageInfo")
            if info is None or not info.flag("hasNextPage"):
                return threads
            cursor = info.text("endCursor")
            if cursor == after:  # the same page again would never end
                raise info.error("endCursor", "does not move on")
            after = cursor

    async def set_resolved(self, thread_node_id: str, resolved: bool) -> bool:
        field = "resolveReviewThread" if resolved else "unresolveReviewThread"
        data = await self.run(field, SET_RESOLVED % field, {"threadId": thread_node_id})
        result = data.obj_or_none(field)
        thread = result.obj_or_none("thread") if result else None
        return thread is not None and thread.flag("isResolved")

    async def add_reaction(self, subject_node_id: str, content: str) -> None:
        await self.run("addReaction", ADD_REACTION, {"subjectId": subject_node_id,
                                                     "content": REACTION_ENUM[content]})
