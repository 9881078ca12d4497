"""The adapter's GraphQL client over httpx2.MockTransport: endpoint, errors, old GHES."""

from __future__ import annotations

import json

import httpx2
import pytest

from livereview.hosts.base import NotFound
from livereview.hosts.github.graphql import GraphQL, ThreadState, graphql_url
from livereview.hosts.http import HttpClient
from livereview.metrics import Metrics


def test_graphql_lives_beside_the_rest_base() -> None:
    assert graphql_url("https://api.github.com") == "https://api.github.com/graphql"
    assert graphql_url("https://ghe.example/api/v3/") == "https://ghe.example/api/graphql"


def client(*answers: dict[str, object]) -> tuple[GraphQL, list[dict[str, object]]]:
    queue, seen = list(answers), []

    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content))
        return httpx2.Response(200, json=queue.pop(0))

    http = HttpClient(base_url="https://ghe.example/api/v3", headers={}, host_type="github",
                      metrics=Metrics(), transport=httpx2.MockTransport(handler))
    return GraphQL(http, graphql_url("https://ghe.example/api/v3")), seen


def threads_page(field: str) -> dict[str, object]:
    return {"data": {"repository": {"pullRequest": {"reviewThreads": {
        "nodes": [{"id": "PRRT_1", "isResolved": True,
                   "comments": {"nodes": [{field: "3000000001" if field == "fullDatabaseId"
                                           else 42}]}}],
        "pageInfo": {"hasNextPage": False, "endCursor": None}}}}}}


async def test_review_threads_are_keyed_by_the_first_comments_rest_id() -> None:
    gql, seen = client(threads_page("fullDatabaseId"))
    assert await gql.review_threads("acme/widgets", 7) == {
        3000000001: ThreadState("PRRT_1", True)}  # beyond GraphQL's 32-bit Int
    assert seen[0]["variables"] == {"owner": "acme", "name": "widgets", "number": 7,
                                    "after": None}


async def test_an_older_enterprise_server_without_full_database_id() -> None:
    gql, seen = client({"errors": [{"message": "Field 'fullDatabaseId' doesn't exist on type "
                                               "'PullRequestReviewComment'"}]},
                       threads_page("databaseId"))
    assert await gql.review_threads("acme/widgets", 7) == {42: ThreadState("PRRT_1", True)}
    assert "databaseId" in str(seen[1]["query"]) and gql.id_field == "databaseId"


async def test_graphql_errors_are_typed() -> None:
    gql, _ = client({"data": {"resolveReviewThread": None}, "errors": [
        {"type": "NOT_FOUND", "path": ["resolveReviewThread"],
         "message": "Could not resolve to a node with the global id of 'x'"}]})
    with pytest.raises(NotFound, match="resolveReviewThread"):
        await gql.set_resolved("x", True)
