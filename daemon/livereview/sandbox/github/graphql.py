"""The fake GitHub's GraphQL endpoint: a small executor for the part of GitHub's schema that
review bots use — repository → pullRequest → reviewThreads (with their comments), node(id),
viewer, and the mutations resolveReviewThread, unresolveReviewThread and addReaction.

It parses real GraphQL documents (operations, aliases, arguments, variables, nested
selections; no fragments or directives) and answers like GitHub: `{"data": …}`, field errors
as `{"type": "NOT_FOUND", "path": …, "message": …}` beside partial data, and unknown fields
as validation errors without data. https://docs.github.com/en/graphql/reference
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from livereview.sandbox.github import search as github_search
from livereview.sandbox.github.model import (
    JSON,
    IssueComment,
    PullRequest,
    Repo,
    Review,
    ReviewComment,
    ReviewThread,
    User,
    iso,
    node_id,
)
from livereview.sandbox.github.state import FakeGitHub

_TOKEN = re.compile(r'\s+|,|#[^\n]*|(\.\.\.|[{}()\[\]:$!=@]|"(?:[^"\\]|\\.)*"|-?\d+|\w+)')
_REACTIONS = {"THUMBS_UP": "+1", "THUMBS_DOWN": "-1", "LAUGH": "laugh", "HOORAY": "hooray",
              "CONFUSED": "confused", "HEART": "heart", "ROCKET": "rocket", "EYES": "eyes"}


class QueryError(Exception):
    """A document the fake cannot run (syntax, unknown field): no data at all."""


class FieldError(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class Field:
    name: str
    alias: str
    args: dict[str, Any]
    selections: list[Field] = field(default_factory=list)


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Obj:
    """A value of an object type: its GraphQL type name and the fake's record."""

    type: str
    value: Any


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = [m.group(1) for m in _TOKEN.finditer(text) if m.group(1)]
        self.at = 0

    def peek(self) -> str:
        return self.tokens[self.at] if self.at < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if not token or (expected is not None and token != expected):
            raise QueryError(f"Parse error on \"{token or 'end of document'}\"")
        self.at += 1
        return token

    def document(self) -> tuple[str, list[Field]]:
        kind = "query"
        if self.peek() in ("query", "mutation"):
            kind = self.take()
            if self.peek() not in ("{", "("):
                self.take()  # the operation's name
            if self.peek() == "(":  # variable definitions: types are not checked
                while self.take() != ")":
                    pass
        selections = self.selections()
        if self.peek():
            raise QueryError("the fake runs one operation per document")
        return kind, selections

    def selections(self) -> list[Field]:
        self.take("{")
        out = []
        while self.peek() != "}":
            if self.peek() == "...":  # an inline fragment: `... on Type { … }`
                self.take()
                if self.take() != "on":
                    raise QueryError("named fragments are not supported by the fake GitHub")
                kind = self.take()
                out.append(Field("...", "...", {"on": kind}, self.selections()))
                continue
            name = alias = self.take()
            if self.peek() == ":":
                self.take()
                name = self.take()
            args = self.arguments() if self.peek() == "(" else {}
            subs = self.selections() if self.peek() == "{" else []
            out.append(Field(name, alias, args, subs))
        self.take("}")
        return out

    def arguments(self) -> dict[str, Any]:
        self.take("(")
        args = {}
        while self.peek() != ")":
            name = self.take()
            self.take(":")
            args[name] = self.value()
        self.take(")")
        return args

    def value(self) -> Any:
        token = self.take()
        if token == "$":  # noqa: S105 - a GraphQL token, not a secret
            return Var(self.take())
        if token == "{":  # noqa: S105
            obj = {}
            while self.peek() != "}":
                key = self.take()
                self.take(":")
                obj[key] = self.value()
            self.take("}")
            return obj
        if token == "[":  # noqa: S105
            items = []
            while self.peek() != "]":
                items.append(self.value())
            self.take("]")
            return items
        if token.startswith('"'):
            return bytes(token[1:-1], "utf-8").decode("unicode_escape")
        if re.fullmatch(r"-?\d+", token):
            return int(token)
        return {"true": True, "false": False, "null": None}.get(token, token)  # enums as str


def _bind(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, Var):
        return variables.get(value.name)
    if isinstance(value, dict):
        return {k: _bind(v, variables) for k, v in value.items()}
    if isinstance(value, list):
        return [_bind(v, variables) for v in value]
    return value


def _connection(items: list[Any], type_name: str, args: dict[str, Any], what: str) -> Obj:
    first = args.get("first")
    if not isinstance(first, int):
        raise FieldError("MISSING_PAGINATION_BOUNDARIES", f"You must provide a `first` or "
                         f"`last` value to properly paginate the `{what}` connection.")
    if not 0 <= first <= 100:
        raise FieldError("EXCESSIVE_PAGINATION", f"Requesting {first} records on the `{what}` "
                         "connection exceeds the `first` limit of 100 records.")
    after = args.get("after")
    start = int(base64.b64decode(after).decode().split(":")[1]) if after else 0
    page = items[start:start + first]
    end = start + len(page)
    return Obj("Connection", {
        "nodes": [Obj(type_name, x) for x in page], "totalCount": len(items),
        "pageInfo": Obj("PageInfo", {
            "hasNextPage": end < len(items), "hasPreviousPage": start > 0,
            "startCursor": base64.b64encode(f"cursor:{start}".encode()).decode(),
            "endCursor": base64.b64encode(f"cursor:{max(end - 1, start)}".encode()).decode()
            if page else None})})


class _Resolvers:
    """field name -> value, per GraphQL type, over the fake's records (lock held)."""

    def __init__(self, fake: FakeGitHub, viewer: User) -> None:
        self.fake = fake
        self.viewer = viewer

    def resolve(self, type_name: str, obj: Any, name: str, args: dict[str, Any]) -> Any:
        table: dict[str, Callable[[], Any]] = getattr(self, f"_{type_name}")(obj, args)
        if name == "__typename":
            return type_name
        if name not in table:
            raise QueryError(f"Field '{name}' doesn't exist on type '{type_name}'")
        return table[name]()

    def _node(self, obj: Any) -> Obj:
        kinds = {ReviewThread: "PullRequestReviewThread", ReviewComment:
                 "PullRequestReviewComment", Review: "PullRequestReview",
                 IssueComment: "IssueComment", PullRequest: "PullRequest", User: "User"}
        return Obj(kinds[type(obj)], obj)

    def _Query(self, _: Any, a: dict[str, Any]) -> dict[str, Callable[[], Any]]:
        def repository() -> Obj:
            try:
                return Obj("Repository", self.fake.find_repo(f"{a.get('owner')}/{a.get('name')}"))
            except Exception:  # noqa: BLE001 - any lookup failure reads as GitHub's NOT_FOUND
                raise FieldError("NOT_FOUND", "Could not resolve to a Repository with the name "
                                 f"'{a.get('owner')}/{a.get('name')}'.") from None
        def search() -> Obj:
            if a.get("type") != "ISSUE":
                raise FieldError("INVALID", "the fake searches issues and pull requests only")
            try:
                found = github_search.search(self.fake.repos, str(a.get("query") or ""))
            except github_search.SearchError as exc:
                raise FieldError("INVALID", str(exc)) from None
            page = _connection(found, "PullRequest", a, "search").value
            nodes = [Obj("PullRequest" if n.value.is_pull else "Issue", n.value)
                     for n in page["nodes"]]
            return Obj("Connection", {**page, "nodes": nodes, "issueCount": len(found)})
        return {"repository": repository, "viewer": lambda: Obj("User", self.viewer),
                "node": lambda: self._lookup(a.get("id")), "search": search}

    def _lookup(self, global_id: Any) -> Obj:
        found = self.fake.nodes.get(str(global_id))
        if found is None:
            raise FieldError("NOT_FOUND", f"Could not resolve to a node with the global id of "
                             f"'{global_id}'")
        return self._node(found)

    def _Mutation(self, _: Any, a: dict[str, Any]) -> dict[str, Callable[[], Any]]:
        data = a.get("input") or {}

        def set_resolved(resolved: bool) -> Obj:
            thread = self._lookup(data.get("threadId")).value
            if not isinstance(thread, ReviewThread):
                raise FieldError("NOT_FOUND", "Could not resolve to PullRequestReviewThread")
            self.fake.resolve_thread(thread, resolved, user=self.viewer.login)
            return Obj("Payload", {"clientMutationId": data.get("clientMutationId"),
                                   "thread": Obj("PullRequestReviewThread", thread)})

        def add_reaction() -> Obj:
            subject = self._lookup(data.get("subjectId"))
            content = _REACTIONS.get(str(data.get("content")))
            if content is None or not hasattr(subject.value, "reactions"):
                raise FieldError("UNPROCESSABLE", "Could not add the reaction")
            reaction = self.fake._react(subject.value.reactions, self.viewer, content)[0]
            return Obj("Payload", {"clientMutationId": data.get("clientMutationId"),
                                   "subject": subject, "reaction": Obj("Reaction", reaction)})
        return {"resolveReviewThread": lambda: set_resolved(True),
                "unresolveReviewThread": lambda: set_resolved(False),
                "addReaction": add_reaction}

    def _Payload(self, obj: JSON, _: Any) -> dict[str, Callable[[], Any]]:
        def constant(value: Any) -> Callable[[], Any]:
            return lambda: value
        return {k: constant(v) for k, v in obj.items()}

    _Connection = _PageInfo = _Payload

    def _Reaction(self, obj: JSON, _: Any) -> dict[str, Callable[[], Any]]:
        upper = {v: k for k, v in _REACTIONS.items()}
        return {"id": lambda: obj["node_id"], "content": lambda: upper[obj["content"]],
                "createdAt": lambda: obj["created_at"]}

    def _User(self, u: User, _: Any) -> dict[str, Callable[[], Any]]:
        return {"login": lambda: u.login, "id": lambda: node_id("U", u.id),
                "databaseId": lambda: u.id, "name": lambda: u.name}

    def _Repository(self, r: Repo, a: dict[str, Any]) -> dict[str, Callable[[], Any]]:
        def pull_request() -> Obj:
            issue = r.issues.get(int(a.get("number") or 0))
            if issue is None or not issue.is_pull:
                raise FieldError("NOT_FOUND", "Could not resolve to a PullRequest with the "
                                 f"number of {a.get('number')}.")
            return Obj("PullRequest", issue)
        return {"id": lambda: node_id("R", r.id), "name": lambda: r.name,
                "nameWithOwner": lambda: r.full_name,
                "pullRequest": pull_request}

    def _PullRequest(self, pr: PullRequest, a: dict[str, Any]) -> dict[str, Callable[[], Any]]:
        return {"id": lambda: node_id("PR", pr.id), "number": lambda: pr.number,
                "title": lambda: pr.title, "state": lambda: pr.state.upper(),
                "updatedAt": lambda: iso(pr.updated_at),
                "repository": lambda: Obj("Repository", pr.repo),
                "reviewThreads": lambda: _connection(pr.threads, "PullRequestReviewThread", a,
                                                     "reviewThreads")}

    _Issue = _PullRequest  # a search result that is not a PR; its fields are a subset

    def _PullRequestReviewThread(self, t: ReviewThread, a: dict[str, Any]
                                 ) -> dict[str, Callable[[], Any]]:
        comments = [c for c in t.root.pr.review_comments if c.root is t.root]
        return {"id": lambda: node_id("PRRT", t.id), "isResolved": lambda: t.resolved,
                "isOutdated": lambda: t.root.line is None, "path": lambda: t.root.path,
                "line": lambda: t.root.line, "originalLine": lambda: t.root.original_line,
                "diffSide": lambda: t.root.side,
                "resolvedBy": lambda: Obj("User", t.resolved_by) if t.resolved_by else None,
                "comments": lambda: _connection(comments, "PullRequestReviewComment", a,
                                                "comments")}

    def _comment_fields(self, prefix: str, c: Any) -> dict[str, Callable[[], Any]]:
        return {"id": lambda: node_id(prefix, c.id), "databaseId": lambda: c.id,
                "fullDatabaseId": lambda: str(c.id), "body": lambda: c.body,
                "author": lambda: Obj("User", c.user)}

    def _PullRequestReviewComment(self, c: ReviewComment, _: Any
                                  ) -> dict[str, Callable[[], Any]]:
        return {**self._comment_fields("PRRC", c), "path": lambda: c.path,
                "createdAt": lambda: iso(c.created_at)}

    def _PullRequestReview(self, r: Review, _: Any) -> dict[str, Callable[[], Any]]:
        return {**self._comment_fields("PRR", r), "state": lambda: r.state}

    def _IssueComment(self, c: IssueComment, _: Any) -> dict[str, Callable[[], Any]]:
        return self._comment_fields("IC", c)


def execute(fake: FakeGitHub, viewer: User, payload: JSON) -> JSON:
    """Run one GraphQL request `{"query", "variables"}` as `viewer`; GitHub's answer shape."""
    query, variables = payload.get("query"), payload.get("variables") or {}
    if not isinstance(query, str) or not isinstance(variables, dict):
        return {"errors": [{"message": "A query attribute must be specified and must be a "
                            "string."}]}
    try:
        kind, selections = _Parser(query).document()
    except QueryError as exc:
        return {"errors": [{"message": str(exc)}]}
    resolvers = _Resolvers(fake, viewer)
    errors: list[JSON] = []

    def run(type_name: str, obj: Any, fields: list[Field], path: list[Any]) -> JSON:
        out: JSON = {}
        for f in fields:
            if f.name == "...":  # an inline fragment applies to its own type only
                if f.args["on"] == type_name:
                    out.update(run(type_name, obj, f.selections, path))
                continue
            here = [*path, f.alias]
            args = _bind(f.args, variables)
            try:
                value = resolvers.resolve(type_name, obj, f.name, args)
            except FieldError as exc:
                errors.append({"type": exc.kind, "path": here, "message": str(exc)})
                out[f.alias] = None
                continue
            out[f.alias] = shape(value, f, here)
        return out

    def shape(value: Any, f: Field, path: list[Any]) -> Any:
        if isinstance(value, list):
            return [shape(v, f, [*path, i]) for i, v in enumerate(value)]
        if isinstance(value, Obj):
            if not f.selections:
                raise QueryError(f"Field must have selections (field '{f.name}' returns "
                                 f"{value.type} but has no selections.)")
            return run(value.type, value.value, f.selections, path)
        return value

    try:
        with fake.lock:
            data = run("Mutation" if kind == "mutation" else "Query", None, selections, [])
    except QueryError as exc:
        return {"errors": [{"message": str(exc)}]}
    return {"data": data, "errors": errors} if errors else {"data": data}
