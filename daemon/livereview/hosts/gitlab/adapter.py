"""Self-managed GitLab (REST v4) ⇄ the review model.

Only this module and payloads.py know GitLab's field names; the JSON is read there.
Docs: https://docs.gitlab.com/api/merge_requests/, https://docs.gitlab.com/api/discussions/,
https://docs.gitlab.com/api/emoji_reactions/.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlsplit

from livereview.core.model import (
    Anchor,
    ChangedMR,
    Commit,
    Identity,
    MergeRequest,
    Message,
    MRKey,
    Snapshot,
    Thread,
)
from livereview.core.sanitize import inert_commands
from livereview.hosts.base import (
    BadResponse,
    Capabilities,
    Conflict,
    Forbidden,
    HostError,
    NotFound,
    OverHttp,
    ReactionRefused,
)
from livereview.hosts.gitlab import payloads, positions
from livereview.hosts.gitlab.review import GitLabReview
from livereview.hosts.http import HttpClient, decoded
from livereview.hosts.payload import JsonObject, json_object
from livereview.log_setup import get_logger

log = get_logger("livereview.gitlab")
API = "/api/v4"
_MOVED_TO = re.compile(r"/projects/(\d+)(?:/|$)")
# After a 403 on the instance-wide listing, per-project listing is used; the instance
# listing is tried again this often (a token's access can come back).
REPROBE_SECONDS = 900.0
# A listing's rows keep the MR they show (an MR never read is read from it, its discussions
# alone: hosts/base.py ReadsFromListing) for its most recently updated MRs, those a sweep
# reads first, up to these bounds: first sight of 10 000 MRs with long descriptions holds
# no more of them (the others are read as any MR, the MR itself and its discussions).
ROWS_KEPT = 1_000
ROW_TEXT_KEPT = 1_000_000  # characters of their titles and descriptions


class _RowBudget:
    """What one listing may still keep of its rows' MRs (ROWS_KEPT, ROW_TEXT_KEPT)."""

    def __init__(self) -> None:
        self.rows, self.text = ROWS_KEPT, ROW_TEXT_KEPT

    def take(self, row: JsonObject) -> bool:
        try:
            size = len(row.text_or("title")) + len(row.text_or("description"))
        except BadResponse:  # an odd row keeps no MR: it is read whole (payloads.changed_mr)
            return False
        if self.rows <= 0 or size > self.text:
            return False
        self.rows, self.text = self.rows - 1, self.text - size
        return True


def _project(repo: str) -> str:
    return quote(repo, safe="")


class GitLab(GitLabReview, OverHttp):
    type = "gitlab"
    capabilities = Capabilities(reactions=True, resolve=True, threaded_general_comments=True,
                                instance_wide_listing=True, mention_inbox=True)

    def __init__(self, name: str, http: HttpClient, *, list_strategy: str = "auto",
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.http = http
        self.list_strategy = list_strategy  # auto | instance | project (as configured)
        # How changed MRs are listed now: `auto` starts with the instance and falls back to
        # per project only on a 403, trying the instance again every REPROBE_SECONDS.
        self.listing = "project" if list_strategy == "project" else "instance"
        self._reprobe_at = 0.0
        self._clock = clock
        self._project_ids: dict[str, int] = {}
        self._me: Identity | None = None

    @property
    def listing_is_cheap(self) -> bool:
        return self.listing == "instance"


    async def whoami(self) -> Identity:
        user = await self.http.one("GET", f"{API}/user")
        self._me = Identity(self.name, user.token("id"), user.text("username"))
        return self._me

    async def repo_exists(self, repo: str) -> bool:
        try:
            project = await self.http.one("GET", f"{API}/projects/{_project(repo)}")
        except NotFound:
            return False
        self._project_ids[repo] = project.number("id")
        return True

    async def resolved_repo(self, repo: str) -> str:
        """The project's current full path: GitLab answers a moved project's old path for
        it (hosts/base.py FollowsMoves), so the path asked for may not be the project's."""
        endpoint = f"GET {API}/projects/:id"
        response = await self.http.request("GET", f"{API}/projects/{_project(repo)}")
        if response.status_code == 301:
            # GitLab ≥ 16.7 (merge request !137578, lib/api/helpers.rb `find_project!`):
            # a former path answers GET with 301 to the same URL by project id.
            moved = _MOVED_TO.search(urlsplit(response.headers.get("location", "")).path)
            if moved is None:
                raise BadResponse(f"{endpoint}: a redirect for {repo!r} names no project id")
            project = await self.http.one("GET", f"{API}/projects/{moved[1]}")
        else:
            project = json_object(await decoded(response, endpoint), endpoint)
        return project.text("path_with_namespace")

    async def _project_id(self, repo: str) -> int:
        if repo not in self._project_ids and not await self.repo_exists(repo):
            raise NotFound(f"project {repo} not found")
        return self._project_ids[repo]

    async def _list(self, path: str, since: datetime | None,
                    repos: str | dict[int, str], budget: _RowBudget) -> list[ChangedMR]:
        """The listing, page by page, of one repo's MRs or (by project id) the instance's:
        only the few fields each MR needs are kept — and the MR of the first rows, within
        `budget` —, so first sight of an instance's 10 000 MRs never holds their whole
        payloads at once."""
        params: dict[str, Any] = {"state": "opened", "order_by": "updated_at", "sort": "desc"}
        if path == f"{API}/merge_requests":
            params["scope"] = "all"
        if since is not None:
            params["updated_after"] = since.astimezone(UTC).isoformat().replace("+00:00", "Z")
        return [payloads.changed_mr(self.name, repo, mr, with_mr=budget.take(mr))
                async for page in self.http.items(path, params) for mr in page
                if (repo := repos if isinstance(repos, str)
                    else repos.get(mr.number_or_none("project_id") or 0)) is not None]

    async def _list_projects(self, repos: tuple[str, ...], since: datetime | None
                             ) -> list[ChangedMR]:
        changed: list[ChangedMR] = []
        budget = _RowBudget()
        for repo in repos:
            changed += await self._list(f"{API}/projects/{_project(repo)}/merge_requests",
                                        since, repo, budget)
        return changed

    async def list_changed_mrs(
        self, repos: tuple[str, ...], since: datetime | None
    ) -> list[ChangedMR]:
        """Open MRs of `repos` updated at or after `since` (all of them when None).

        One request for all repos (`/merge_requests?scope=all`) when the token may list the
        instance; per-project lists after a 403 there (`auto`). Any other failure fails
        this listing only: a proxy's HTML page or a 502 says nothing about permissions.
        """
        probing = self.listing == "project" and self.list_strategy == "auto"
        if self.listing == "project" and not (probing and self._clock() >= self._reprobe_at):
            return await self._list_projects(repos, since)
        by_id = {await self._project_id(repo): repo for repo in repos}
        try:
            changed = await self._list(f"{API}/merge_requests", since, by_id, _RowBudget())
        except Forbidden as exc:
            if self.list_strategy == "instance":
                raise
            if self.listing == "instance":
                log.warning("instance_listing_forbidden", host=self.name, reason=str(exc),
                            fallback="project", retry_in_seconds=REPROBE_SECONDS)
            self.listing, self._reprobe_at = "project", self._clock() + REPROBE_SECONDS
            return await self._list_projects(repos, since)
        except HostError as exc:
            if self.listing == "instance":
                raise
            # A look back that failed for another reason: per project works, try later.
            log.info("instance_listing_probe_failed", host=self.name, reason=str(exc))
            self._reprobe_at = self._clock() + REPROBE_SECONDS
            return await self._list_projects(repos, since)
        if self.listing == "project":
            log.info("instance_listing_restored", host=self.name)
            self.listing = "instance"
        return changed

    async def mention_inbox(self, repos: tuple[str, ...]) -> dict[MRKey, list[str]]:
        """The bot user's pending to-dos on MRs of `repos` (GitLab makes one for every note
        that mentions the user: one request for the whole instance, and not subject to
        the MR's throttled updated_at). https://docs.gitlab.com/api/todos/"""
        watched = set(repos)
        inbox: dict[MRKey, list[str]] = {}
        params = {"type": "MergeRequest", "state": "pending"}
        async for page in self.http.items(f"{API}/todos", params):
            for todo in page:
                target = payloads.todo_target(todo)
                if target is not None and target[0] in watched:
                    inbox.setdefault(MRKey(self.name, *target), []).append(todo.token("id"))
        return inbox

    async def clear_mentions(self, item_ids: list[str]) -> None:
        for todo_id in item_ids:
            try:
                await self.http.request("POST", f"{API}/todos/{todo_id}/mark_as_done")
            except NotFound:  # already done: GitLab closes to-dos when the bot acts on the MR
                continue

    def _mr_path(self, key: MRKey) -> str:
        return f"{API}/projects/{_project(key.repo)}/merge_requests/{key.iid}"

    async def _with_reactions(self, key: MRKey, thread: Thread, ids: frozenset[str]) -> Thread:
        """GitLab's discussions carry no award emoji: read them for the notes asked for."""
        messages = []
        for message in thread.messages:
            if message.id in ids:
                path = f"{self._mr_path(key)}/notes/{message.id}/award_emoji"
                message = replace(message, reactions=tuple([
                    payloads.reaction(a) async for page in self.http.items(path) for a in page]))
            messages.append(message)
        return replace(thread, messages=tuple(messages))

    async def fetch_mr(self, repo: str, iid: int,
                       reactions_for: frozenset[str] = frozenset()) -> Snapshot:
        snapshot = await self.fetch_mr_without_commits(repo, iid, reactions_for)
        return replace(snapshot, commits=await self.fetch_commits(snapshot.mr.key))

    async def fetch_mr_without_commits(self, repo: str, iid: int,
                                       reactions_for: frozenset[str] = frozenset()
                                       ) -> Snapshot:
        """The MR and its discussions; its commits not read (`commits` None): a third
        request the poller makes only when a push or a job needs them (hosts/base.py
        ReadsCommitsApart)."""
        return await self.fetch_threads(await self.fetch_merge_request(
            MRKey(self.name, repo, iid)), reactions_for)

    async def fetch_merge_request(self, key: MRKey) -> MergeRequest:
        """https://docs.gitlab.com/api/merge_requests/#get-single-mr: all a listing row
        has, and the diff refs."""
        # Hot MRs are re-fetched every few seconds: revalidate rather than re-download.
        return payloads.merge_request(
            key, await self.http.one("GET", self._mr_path(key), conditional=True))

    async def fetch_threads(self, mr: MergeRequest,
                            reactions_for: frozenset[str] = frozenset()) -> Snapshot:
        """`mr` (a listing row's, or one just read) with its discussions; its commits not
        read (hosts/base.py ReadsFromListing)."""
        base = self._mr_path(mr.key)
        threads = [payloads.thread(d) async for page in self.http.items(
            f"{base}/discussions", conditional=True) for d in page]
        if reactions_for:
            threads = [await self._with_reactions(mr.key, t, reactions_for)
                       if any(m.id in reactions_for for m in t.messages) else t
                       for t in threads]
        return Snapshot(mr=mr, threads=tuple(threads), commits=None)

    async def fetch_commits(self, key: MRKey) -> tuple[Commit, ...]:
        """https://docs.gitlab.com/api/merge_requests/#get-single-merge-request-commits"""
        return tuple([payloads.commit(c) async for page in self.http.items(
            f"{self._mr_path(key)}/commits", conditional=True) for c in page])

    async def fetch_thread(self, key: MRKey, thread_id: str) -> Thread:
        data = await self.http.one("GET", f"{self._mr_path(key)}/discussions/{thread_id}")
        return payloads.thread(data)

    async def diff(self, key: MRKey, head_sha: str | None = None) -> str:
        """The MR's changes as one unified diff: the current version, or the version whose
        head was `head_sha` (a thread started before a push or force-push points there)."""
        base = self._mr_path(key)
        if head_sha:
            versions = [v async for page in self.http.items(f"{base}/versions") for v in page]
            match = next((v for v in versions if v.text_or("head_commit_sha") == head_sha), None)
            if match is not None:
                version = await self.http.one("GET", f"{base}/versions/{match.token('id')}")
                return payloads.unified(version.objects("diffs"))
        try:
            files = [f async for page in self.http.items(f"{base}/diffs") for f in page]
        except NotFound:  # GitLab < 15.7 has no /diffs; /changes is the older equivalent
            files = (await self.http.one("GET", f"{base}/changes")).objects("changes")
        return payloads.unified(files)

    async def file_content(self, repo: str, ref: str, path: str) -> str:
        response = await self.http.request(
            "GET", f"{API}/projects/{_project(repo)}/repository/files/{_project(path)}/raw",
            params={"ref": ref})
        return response.text

    async def list_files(self, repo: str, ref: str, directory: str) -> list[str]:
        params = {"path": directory.strip("/"), "ref": ref}
        entries = [e async for page in self.http.items(
            f"{API}/projects/{_project(repo)}/repository/tree", params) for e in page]
        return [e.text("path") for e in entries if e.text_or("type") == "blob"]

    async def reply(self, key: MRKey, thread_id: str, body: str) -> Message:
        note = await self.http.one(
            "POST", f"{self._mr_path(key)}/discussions/{thread_id}/notes",
            json={"body": inert_commands(body)})
        return payloads.message(note, thread_id)

    async def comment(self, key: MRKey, body: str, anchor: Anchor | None = None) -> Message:
        """A thread: general, or on a line, a range (its line codes come from the file's
        diff, one more read) or a whole file (hosts/gitlab/positions.py)."""
        payload: dict[str, Any] = {"body": inert_commands(body)}
        if anchor is not None:
            diff = "" if anchor.start_line is None else await self._file_hunks(key, anchor)
            payload["position"] = positions.position(anchor, diff)
        discussion = await self.http.one("POST", f"{self._mr_path(key)}/discussions",
                                            json=payload)
        posted = payloads.thread(discussion).root
        if posted is None:
            raise discussion.error("notes", "empty")
        return posted

    async def _file_hunks(self, key: MRKey, anchor: Anchor) -> str:
        """The anchored file's diff, read until it is found (the line codes of a range)."""
        async for item in self.diff_files(key):
            if anchor.new_path in (item.change.new_path, item.change.old_path):
                return item.diff
        raise NotFound(f"{anchor.new_path} is not in the diff of {key}")

    async def react(self, key: MRKey, message_id: str, emoji: str) -> None:
        path = f"{self._mr_path(key)}/notes/{message_id}/award_emoji"
        try:
            await self.http.request("POST", path, json={"name": emoji})
        except (NotFound, Conflict) as exc:
            # GitLab answers an already-awarded emoji with an error (404 "Award Emoji Not
            # Found" on older versions): that is success if our award is there.
            me = self._me or await self.whoami()
            awards = [payloads.reaction(a) async for page in self.http.items(path) for a in page]
            if any(a.name == emoji and a.user.id == me.user_id for a in awards):
                return
            if isinstance(exc, NotFound):
                # The note is there (its awards were read) but the award was refused: a
                # name outside GitLab's emoji set ("Award Emoji Name is not a valid emoji
                # name", lib/api/award_emoji.rb answers it with not_found!).
                raise ReactionRefused(f"{emoji!r} is not one of GitLab's emoji names "
                                      "(HTTP 404)") from None
            raise

    async def resolve(self, key: MRKey, thread_id: str, resolved: bool = True) -> None:
        await self.http.request("PUT", f"{self._mr_path(key)}/discussions/{thread_id}",
                                params={"resolved": "true" if resolved else "false"})
