"""Self-managed GitLab (REST v4) ⇄ the review model.

Only this module knows GitLab's field names. Docs: https://docs.gitlab.com/api/merge_requests/,
https://docs.gitlab.com/api/discussions/, https://docs.gitlab.com/api/emoji_reactions/.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

import structlog

from livereview.hosts.base import (
    BadResponse,
    Capabilities,
    Conflict,
    Forbidden,
    NotFound,
)
from livereview.hosts.http import HttpClient
from livereview.model import (
    Actor,
    Anchor,
    ChangedMR,
    Commit,
    Identity,
    MergeRequest,
    Message,
    MRKey,
    Reaction,
    Snapshot,
    Thread,
)

log = structlog.get_logger("livereview.gitlab")
API = "/api/v4"


def _time(value: Any) -> datetime:
    if not isinstance(value, str):
        raise BadResponse(f"expected a timestamp, got {type(value).__name__}")
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _actor(user: dict[str, Any] | None) -> Actor:
    if not user:
        return Actor("0", "ghost", "Ghost User")
    return Actor(str(user["id"]), str(user.get("username", "")), str(user.get("name", "")))


def _anchor(position: dict[str, Any] | None) -> Anchor | None:
    if not position or position.get("position_type", "text") != "text":
        return None
    new_path = position.get("new_path") or position.get("old_path")
    if not new_path:
        return None
    return Anchor(
        new_path=new_path,
        old_path=position.get("old_path") or new_path,
        new_line=position.get("new_line"),
        old_line=position.get("old_line"),
        base_sha=position.get("base_sha") or "",
        start_sha=position.get("start_sha") or "",
        head_sha=position.get("head_sha") or "",
    )


def _message(note: dict[str, Any], thread_id: str) -> Message:
    return Message(
        id=str(note["id"]),
        thread_id=thread_id,
        author=_actor(note.get("author")),
        body=note.get("body") or "",
        created_at=_time(note["created_at"]),
        updated_at=_time(note.get("updated_at") or note["created_at"]),
        system=bool(note.get("system")),
    )


def _thread(discussion: dict[str, Any]) -> Thread:
    thread_id = str(discussion["id"])
    notes = discussion.get("notes") or []
    first = notes[0] if notes else {}
    return Thread(
        id=thread_id,
        messages=tuple(_message(n, thread_id) for n in notes),
        anchor=_anchor(first.get("position")),
        resolvable=bool(first.get("resolvable")),
        resolved=bool(first.get("resolvable")) and all(
            n.get("resolved") for n in notes if n.get("resolvable")),
        individual=bool(discussion.get("individual_note")),
    )


def _merge_request(key: MRKey, data: dict[str, Any]) -> MergeRequest:
    refs = data.get("diff_refs") or {}
    return MergeRequest(
        key=key,
        title=data.get("title") or "",
        description=data.get("description") or "",
        author=_actor(data.get("author")),
        source_branch=data.get("source_branch") or "",
        target_branch=data.get("target_branch") or "",
        state=data.get("state") or "opened",
        head_sha=refs.get("head_sha") or data.get("sha") or "",
        base_sha=refs.get("base_sha") or "",
        start_sha=refs.get("start_sha") or "",
        web_url=data.get("web_url") or "",
        created_at=_time(data["created_at"]),
        updated_at=_time(data["updated_at"]),
    )


def _commit(data: dict[str, Any]) -> Commit:
    return Commit(
        sha=str(data["id"]),
        title=data.get("title") or "",
        created_at=_time(data.get("created_at") or data.get("committed_date")),
        parent_ids=tuple(data.get("parent_ids") or ()),
    )


def _unified(files: list[dict[str, Any]]) -> str:
    return "".join(
        f"--- a/{f['old_path']}\n+++ b/{f['new_path']}\n{f.get('diff') or ''}"
        + ("" if (f.get("diff") or "").endswith("\n") else "\n")
        for f in files
    )


def _project(repo: str) -> str:
    return quote(repo, safe="")


class GitLab:
    type = "gitlab"
    capabilities = Capabilities(reactions=True, resolve=True, threaded_general_comments=True,
                                instance_wide_listing=True, mention_inbox=True)

    def __init__(self, name: str, http: HttpClient, *, list_strategy: str = "auto") -> None:
        self.name = name
        self.http = http
        self.list_strategy = list_strategy  # auto | instance | project; auto settles on use
        self._project_ids: dict[str, int] = {}
        self._me: Identity | None = None

    @property
    def listing_is_cheap(self) -> bool:
        return self.list_strategy != "project"

    @property
    def requests_sent(self) -> int:
        return self.http.requests_sent

    async def close(self) -> None:
        await self.http.close()

    async def whoami(self) -> Identity:
        user = await self.http.json("GET", f"{API}/user")
        self._me = Identity(self.name, str(user["id"]), str(user["username"]))
        return self._me

    async def repo_exists(self, repo: str) -> bool:
        try:
            project = await self.http.json("GET", f"{API}/projects/{_project(repo)}")
        except NotFound:
            return False
        self._project_ids[repo] = int(project["id"])
        return True

    async def _project_id(self, repo: str) -> int:
        if repo not in self._project_ids and not await self.repo_exists(repo):
            raise NotFound(f"project {repo} not found")
        return self._project_ids[repo]

    async def _list(self, path: str, since: datetime | None) -> list[dict[str, Any]]:
        params: dict[str, Any] = {"state": "opened", "order_by": "updated_at", "sort": "desc"}
        if path == f"{API}/merge_requests":
            params["scope"] = "all"
        if since is not None:
            params["updated_after"] = since.astimezone(UTC).isoformat().replace("+00:00", "Z")
        return [mr async for page in self.http.pages(path, params) for mr in page]

    async def _list_instance(self, repos: tuple[str, ...], since: datetime | None
                             ) -> list[ChangedMR]:
        by_id = {await self._project_id(repo): repo for repo in repos}
        items = await self._list(f"{API}/merge_requests", since)
        return [
            ChangedMR(by_id[mr["project_id"]], int(mr["iid"]), _time(mr["updated_at"]),
                      mr.get("state", "opened"))
            for mr in items
            if mr.get("project_id") in by_id
        ]

    async def _list_projects(self, repos: tuple[str, ...], since: datetime | None
                             ) -> list[ChangedMR]:
        changed: list[ChangedMR] = []
        for repo in repos:
            items = await self._list(f"{API}/projects/{_project(repo)}/merge_requests", since)
            changed += [ChangedMR(repo, int(mr["iid"]), _time(mr["updated_at"]),
                                  mr.get("state", "opened")) for mr in items]
        return changed

    async def list_changed_mrs(
        self, repos: tuple[str, ...], since: datetime | None
    ) -> list[ChangedMR]:
        """Open MRs of `repos` updated at or after `since` (all of them when None).

        One request for all repos (`/merge_requests?scope=all`) when the token may list the
        instance; per-project lists otherwise. `auto` tries the first and settles.
        """
        if self.list_strategy == "project":
            return await self._list_projects(repos, since)
        try:
            changed = await self._list_instance(repos, since)
        except (Forbidden, BadResponse) as exc:
            if self.list_strategy == "instance":
                raise
            log.warning("instance_listing_unusable", host=self.name, reason=str(exc),
                        fallback="project")
            self.list_strategy = "project"
            return await self._list_projects(repos, since)
        self.list_strategy = "instance"
        return changed

    async def mention_inbox(self, repos: tuple[str, ...]) -> dict[MRKey, list[str]]:
        """The bot user's pending to-dos on MRs of `repos` (GitLab makes one for every note
        that mentions the user: one request for the whole instance, and not subject to
        the MR's throttled updated_at). https://docs.gitlab.com/api/todos/"""
        watched = set(repos)
        inbox: dict[MRKey, list[str]] = {}
        params = {"type": "MergeRequest", "state": "pending"}
        async for page in self.http.pages(f"{API}/todos", params):
            for todo in page:
                repo = (todo.get("project") or {}).get("path_with_namespace")
                iid = (todo.get("target") or {}).get("iid")
                if repo in watched and isinstance(iid, int):
                    inbox.setdefault(MRKey(self.name, repo, iid), []).append(str(todo["id"]))
        return inbox

    async def clear_mentions(self, item_ids: list[str]) -> None:
        for todo_id in item_ids:
            try:
                await self.http.json("POST", f"{API}/todos/{todo_id}/mark_as_done")
            except NotFound:  # already done: GitLab closes to-dos when the bot acts on the MR
                continue

    def _mr_path(self, key: MRKey) -> str:
        return f"{API}/projects/{_project(key.repo)}/merge_requests/{key.iid}"

    async def _with_reactions(self, key: MRKey, thread: Thread, ids: frozenset[str]) -> Thread:
        """GitLab's discussions carry no award emoji: read them for the notes asked for."""
        messages = []
        for message in thread.messages:
            if message.id in ids:
                awards = await self.http.json(
                    "GET", f"{self._mr_path(key)}/notes/{message.id}/award_emoji")
                message = replace(message, reactions=tuple(
                    Reaction(str(a["name"]), _actor(a.get("user")), str(a["id"]))
                    for a in awards))
            messages.append(message)
        return replace(thread, messages=tuple(messages))

    async def fetch_mr(self, repo: str, iid: int,
                       reactions_for: frozenset[str] = frozenset()) -> Snapshot:
        key = MRKey(self.name, repo, iid)
        base = self._mr_path(key)
        # Hot MRs are re-fetched every few seconds: revalidate rather than re-download.
        data = await self.http.json("GET", base, conditional=True)
        discussions = [d async for page in self.http.pages(f"{base}/discussions",
                                                            conditional=True) for d in page]
        commits = [c async for page in self.http.pages(f"{base}/commits", conditional=True)
                   for c in page]
        threads = [_thread(d) for d in discussions]
        if reactions_for:
            threads = [await self._with_reactions(key, t, reactions_for)
                       if any(m.id in reactions_for for m in t.messages) else t
                       for t in threads]
        return Snapshot(
            mr=_merge_request(key, data),
            threads=tuple(threads),
            commits=tuple(_commit(c) for c in commits),
        )

    async def fetch_thread(self, key: MRKey, thread_id: str) -> Thread:
        data = await self.http.json("GET", f"{self._mr_path(key)}/discussions/{thread_id}")
        return _thread(data)

    async def diff(self, key: MRKey, head_sha: str | None = None) -> str:
        """The MR's changes as one unified diff: the current version, or the version whose
        head was `head_sha` (a thread started before a push or force-push points there)."""
        base = self._mr_path(key)
        if head_sha:
            versions = [v async for page in self.http.pages(f"{base}/versions") for v in page]
            match = next((v for v in versions if v.get("head_commit_sha") == head_sha), None)
            if match is not None:
                version = await self.http.json("GET", f"{base}/versions/{match['id']}")
                return _unified(version.get("diffs") or [])
        try:
            files = [f async for page in self.http.pages(f"{base}/diffs") for f in page]
        except NotFound:  # GitLab < 15.7 has no /diffs; /changes is the older equivalent
            files = (await self.http.json("GET", f"{base}/changes")).get("changes", [])
        return _unified(files)

    async def file_content(self, repo: str, ref: str, path: str) -> str:
        response = await self.http.request(
            "GET", f"{API}/projects/{_project(repo)}/repository/files/{_project(path)}/raw",
            params={"ref": ref})
        return response.text

    async def list_files(self, repo: str, ref: str, directory: str) -> list[str]:
        params = {"path": directory.strip("/"), "ref": ref}
        entries = [e async for page in self.http.pages(
            f"{API}/projects/{_project(repo)}/repository/tree", params) for e in page]
        return [str(e["path"]) for e in entries if e.get("type") == "blob"]

    async def reply(self, key: MRKey, thread_id: str, body: str) -> Message:
        note = await self.http.json(
            "POST", f"{self._mr_path(key)}/discussions/{thread_id}/notes", json={"body": body})
        return _message(note, thread_id)

    async def comment(self, key: MRKey, body: str, anchor: Anchor | None = None) -> Message:
        payload: dict[str, Any] = {"body": body}
        if anchor is not None:
            payload["position"] = {
                "position_type": "text", "base_sha": anchor.base_sha,
                "start_sha": anchor.start_sha, "head_sha": anchor.head_sha,
                "new_path": anchor.new_path, "old_path": anchor.old_path,
                "new_line": anchor.new_line, "old_line": anchor.old_line,
            }
        discussion = await self.http.json("POST", f"{self._mr_path(key)}/discussions",
                                          json=payload)
        return _message(discussion["notes"][0], str(discussion["id"]))

    async def react(self, key: MRKey, message_id: str, emoji: str) -> None:
        path = f"{self._mr_path(key)}/notes/{message_id}/award_emoji"
        try:
            await self.http.json("POST", path, json={"name": emoji})
        except (NotFound, Conflict):
            # GitLab answers an already-awarded emoji with an error (404 "Award Emoji Not
            # Found" on older versions): that is success if our award is there.
            me = self._me or await self.whoami()
            awards = await self.http.json("GET", path)
            if not any(a.get("name") == emoji and str((a.get("user") or {}).get("id"))
                       == me.user_id for a in awards):
                raise

    async def resolve(self, key: MRKey, thread_id: str, resolved: bool = True) -> None:
        await self.http.json("PUT", f"{self._mr_path(key)}/discussions/{thread_id}",
                             params={"resolved": "true" if resolved else "false"})
