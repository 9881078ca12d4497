"""The Host protocol: a small async interface over model types, plus typed errors.

A host that cannot do something says so with a capability flag instead of raising from a
method it pretends to have (docs/DESIGN.md §3).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from livereview.core.model import (
    Anchor,
    ChangedMR,
    Commit,
    DiffRefs,
    FileChange,
    FileDiff,
    Identity,
    InlineComment,
    MergeRequest,
    Message,
    MRKey,
    People,
    PostedReview,
    Snapshot,
    Thread,
    Verdict,
)
from livereview.hosts.diffs import EVERY_FILE, PathFilter

if TYPE_CHECKING:  # http.py imports the errors below
    from livereview.hosts.http import HttpClient


class HostError(Exception):
    """Base of every host failure; `str()` is safe to log (no tokens, no bodies)."""


class NotFound(HostError):
    pass


class Forbidden(HostError):
    pass


class AuthFailed(HostError):
    pass


class Conflict(HostError):
    pass


class BadRequest(HostError):
    """HTTP 400: the host refused what was asked (a value it does not take)."""


class ReactionRefused(HostError):
    """The host does not offer this reaction (an emoticon Data Center's picker lacks, a
    name that is not one of GitHub's eight): asking again will not help, an ack must be a
    comment on this host (docs/DESIGN.md §4, "Ack")."""


class Unsupported(HostError):
    """The host has no way to do this (its one-line reason says why): never a silent no-op."""


class TLSFailed(HostError):
    """The host's certificate could not be verified: retrying will not help."""


class Transient(HostError):
    """A temporary failure (5xx, timeout, reset): retrying later may succeed."""


class RateLimited(Transient):
    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class BadResponse(Transient):
    """The host answered with something that is not what its API promises (HTML, truncated)."""


@dataclass(frozen=True)
class Capabilities:
    reactions: bool = True
    resolve: bool = True
    threaded_general_comments: bool = True  # can a general comment be replied to in place?
    instance_wide_listing: bool = False
    mention_inbox: bool = False  # the host queues mentions of the bot (GitLab to-dos)
    verdicts: bool = True  # approve / unapprove / request_changes exist
    review_batch: bool = False  # post_review is ONE request (findings+summary+verdict): GitHub


@dataclass(frozen=True)
class AccessNote:
    """A row `check` shows about what a host's credential is and may do."""

    subject: str
    ok: bool
    detail: str


@runtime_checkable
class ExplainsAccess(Protocol):
    """A host whose credential comes in kinds worth telling apart (Bitbucket Cloud: an
    access token or an account's API token, and its scopes)."""

    def access_notes(self) -> list[AccessNote]: ...


@runtime_checkable
class ReadsCommitsApart(Protocol):
    """A host whose MR, discussions and commits are separate requests (GitLab): a read may
    leave the commits out (`Snapshot.commits` None) and read them when they are needed
    (docs/DESIGN.md §6 "First sight"; bench figure 16)."""

    async def fetch_mr_without_commits(self, repo: str, iid: int,
                                       reactions_for: frozenset[str] = frozenset()
                                       ) -> Snapshot: ...

    async def fetch_commits(self, key: MRKey) -> tuple[Commit, ...]: ...


@runtime_checkable
class ReadsFromListing(Protocol):
    """A host whose listing rows carry an MR read's every field but its diff refs (GitLab:
    `ChangedMR.mr`): a first read reads only the MR's discussions, and the MR itself when
    its diff refs are needed — a job it makes, a later read (docs/DESIGN.md §6 "First
    sight"; bench figure 16)."""

    async def fetch_threads(self, mr: MergeRequest,
                            reactions_for: frozenset[str] = frozenset()) -> Snapshot: ...

    async def fetch_merge_request(self, key: MRKey) -> MergeRequest: ...


@runtime_checkable
class PacedInbox(Protocol):
    """A host whose mention inbox asks to be read no more often than it says (GitHub's
    X-Poll-Interval) and whose cheap listing it stands in for on the cycle it is read:
    one change-signal request per idle cycle (DESIGN §3, GitHub polling)."""

    def inbox_due(self) -> bool: ...


@runtime_checkable
class LooksCheaply(Protocol):
    """A host that can tell with one conditional request whether an MR changed since it was
    last read (GitHub: the PR's ETag; a 304 costs no rate limit). The active tier looks at
    the MRs people are busy on this way between hot cycles (docs/DESIGN.md §6)."""

    async def mr_changed(self, key: MRKey) -> bool: ...

    def forget_look(self, key: MRKey) -> None:
        """A read of `key` failed: the next look says "changed" (what the last look saw
        was never stored, and a look on its answer would say "unchanged")."""


class Host(Protocol):
    name: str
    type: str
    capabilities: Capabilities

    @property
    def requests_sent(self) -> int:
        """Requests sent so far (for cycle reports and benchmarks)."""
        ...

    @property
    def listing_is_cheap(self) -> bool:
        """One request lists changes of every watched repo (else one per repo)."""
        ...

    async def whoami(self) -> Identity: ...

    async def mention_inbox(self, repos: tuple[str, ...]) -> dict[MRKey, list[str]]:
        """MRs where the bot was mentioned since it last looked, with the inbox item ids."""
        ...

    async def clear_mentions(self, item_ids: list[str]) -> None: ...

    async def repo_exists(self, repo: str) -> bool: ...

    async def list_changed_mrs(
        self, repos: tuple[str, ...], since: datetime | None
    ) -> list[ChangedMR]: ...

    async def fetch_mr(self, repo: str, iid: int,
                       reactions_for: frozenset[str] = frozenset()) -> Snapshot:
        """The MR's snapshot; reactions are read for the messages in `reactions_for` (hosts
        whose threads do not carry them make one request per such message)."""
        ...

    async def fetch_thread(self, key: MRKey, thread_id: str) -> Thread: ...

    async def diff(self, key: MRKey, head_sha: str | None = None) -> str:
        """The MR's changes as one unified diff (at the version whose head was `head_sha`)."""
        ...

    async def file_content(self, repo: str, ref: str, path: str) -> str: ...

    async def list_files(self, repo: str, ref: str, directory: str) -> list[str]:
        """Paths of the files directly in `directory` at `ref` (NotFound if none)."""
        ...

    async def reply(self, key: MRKey, thread_id: str, body: str) -> Message: ...

    async def comment(self, key: MRKey, body: str, anchor: Anchor | None = None) -> Message: ...

    async def react(self, key: MRKey, message_id: str, emoji: str) -> None: ...

    # ---- reviews (docs/DESIGN.md §11) ------------------------------------------------------------
    async def diffstat(self, key: MRKey, paths: PathFilter = EVERY_FILE) -> list[FileChange]:
        """The files `paths` wants, each with its counts: asked of the host alone where its
        API takes paths (Bitbucket Cloud), else read until every plain path is met."""
        ...

    def diff_files(self, key: MRKey, max_file_bytes: int = 1_000_000,
                   paths: PathFilter = EVERY_FILE) -> AsyncIterator[FileDiff]:
        """The MR's diff one file at a time; memory bounded by one file (pages of the host's
        per-file/paginated endpoints, never the whole diff at once). Only the files `paths`
        wants are read where the host reads per file, and paging stops once every plain
        path wanted has been met."""
        ...

    async def post_review(self, key: MRKey, refs: DiffRefs, comments: Sequence[InlineComment],
                          body: str, verdict: Verdict) -> PostedReview:
        """Inline comments + summary + verdict in as few requests as the host allows.
        GitHub: one POST /pulls/{n}/reviews (event APPROVE/REQUEST_CHANGES/COMMENT, comments a
        JSON array of {path,line,side,body}); 422 on own PR -> COMMENT with the verdict in body.
        GitLab: one discussion per comment (position with base/start/head sha, new_line and/or
        old_line), then the summary note, then approve/unapprove. Bitbucket: inline comments
        (Cloud `inline {path,from,to}`, DC `anchor`), summary, then approve/request-changes."""
        ...

    async def people(self, key: MRKey) -> People:
        """Draft, reviewers, approvals and labels, as the host has them now (`mr show`)."""
        ...

    async def approve(self, key: MRKey) -> None: ...

    async def unapprove(self, key: MRKey) -> None: ...

    async def request_changes(self, key: MRKey, body: str = "") -> Message | None: ...

    async def reviews_posted(self, key: MRKey) -> list[Message]:
        """Summary/review bodies the bot posted on this MR (for adoption after a lost response:
        the runner searches them for its marker). GitHub: GET /pulls/{n}/reviews by the bot;
        others: the bot's general notes."""
        ...

    async def resolve(self, key: MRKey, thread_id: str, resolved: bool = True) -> None: ...

    async def close(self) -> None: ...


class OverHttp:
    """What every adapter shares about its one HTTP client: the request count the cycle
    reports and benchmarks read, and closing it."""

    http: HttpClient

    @property
    def requests_sent(self) -> int:
        return self.http.requests_sent

    async def close(self) -> None:
        await self.http.close()


@runtime_checkable
class PagedDiffstat(Protocol):
    """A host whose diffstat comes in pages: each page's rows as it arrives, for callers
    that show them at once (`mr diffstat` on a terminal, MCP progress)."""

    def diffstat_pages(self, key: MRKey, paths: PathFilter = EVERY_FILE
                       ) -> AsyncIterator[list[FileChange]]: ...


@runtime_checkable
class PostsNotes(Protocol):
    """A host with two kinds of general comment (GitLab): a thread, which someone must
    resolve before a strict project merges, and a note, which asks nothing of anyone."""

    async def note(self, key: MRKey, body: str) -> Message: ...


@runtime_checkable
class FollowsMoves(Protocol):
    """A host whose API answers a renamed or transferred repo's old path for the repo
    (GitLab's redirect routes: lib/api/helpers.rb `find_project` calls
    `find_by_full_path(id, follow_redirects: true)`): the path it really resolves to."""

    async def resolved_repo(self, repo: str) -> str: ...


def statement(host: Host, key: MRKey, body: str) -> Awaitable[Message]:
    """The bot's own word on the MR — a review's summary, a notice, an answer whose thread
    was deleted — that is no question for anyone: a note where the host tells notes from
    threads (it must never block a merge), else the host's general comment. Replies still
    reach the bot: on GitLab, replying to a note makes it a thread with the same id."""
    return host.note(key, body) if isinstance(host, PostsNotes) else host.comment(key, body)
