"""What the operator's console (DESIGN §11) shows, read as the operator commands read it
(tools/status.py): the `health` verdict per host, the work `pending` lists, recent answers
with their latencies, and where each lesson came from. Read-only; "nothing polled yet" is an
empty answer here, never an error, so a fresh install's console opens."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from livereview.core.lessons import THUMBS_DOWN
from livereview.core.model import JobState, Lesson, MRKey
from livereview.settings import Settings
from livereview.store import jobs, snapshots
from livereview.store.engine import StoreMissing
from livereview.store.leases import INSTANCE
from livereview.tools import status
from livereview.tools.errors import BadInput

MIN_MAX_AGE_SECONDS = 300.0


@dataclass(frozen=True)
class HostHealth:
    host: str
    shard: str  # "" when the host is polled as one listing
    repos: tuple[str, ...]
    last_success: datetime | None
    new_shard: bool
    age_seconds: float | None
    healthy: bool


@dataclass(frozen=True)
class Work:
    """A reply job or a review run, as one `livereview pending` line."""

    key: str
    mr: MRKey
    kind: str  # the reply's reason, or "review (trigger)"
    state: str
    attempts: int
    last_error: str
    created_at: datetime
    next_attempt_at: datetime | None  # only while another attempt will come


@dataclass(frozen=True)
class Answer:
    mr: MRKey
    message_id: str
    state: str
    comment_at: datetime
    to_ack: timedelta | None
    to_reply: timedelta | None


@dataclass(frozen=True)
class LessonSource:
    lesson: Lesson
    mr: MRKey | None  # the MR of the concession, when its reply job is known
    quote: str  # what the person said that the bot conceded to
    vetoes: tuple[str, ...]  # who gave the concession a 👎


def max_age(settings: Settings) -> float:
    """The `health` command's default threshold."""
    return max(MIN_MAX_AGE_SECONDS, 5 * settings.daemon.poll_interval_seconds)


def health(settings: Settings, now: datetime) -> list[HostHealth]:
    """Each host's stalest shard and the verdict `livereview health` gives it."""
    last = status.last_success(settings)
    limit = max_age(settings)
    found = []
    for host in settings.hosts:
        scope, repos, at, new = last.get(host.name, (INSTANCE, (), None, True))
        age = None if at is None else (now - at).total_seconds()
        found.append(HostHealth(host.name, "" if scope == INSTANCE else scope, repos, at,
                                new, age, age is not None and age <= limit))
    return found


def pending(settings: Settings) -> list[Work]:
    """Open and failed reply jobs, open and given-up review runs: `livereview pending`."""
    try:
        rows, runs = status.pending(settings, include_replied=False, repo=None)
    except StoreMissing:
        return []
    open_states = {s.value for s in JobState if s.open}
    work = [Work(r.key, MRKey(r.host, r.repo, r.iid), r.reason, r.state, r.attempts,
                 r.last_error, r.comment_created_at,
                 r.next_attempt_at if r.state in open_states else None) for r in rows]
    work += [Work(r.key, MRKey(r.host, r.repo, r.iid), f"review ({r.trigger})", r.state,
                  r.attempts, r.last_error, r.created_at,
                  r.next_attempt_at if r.state != JobState.FAILED.value else None)
             for r in runs]
    return work


def recent(settings: Settings, limit: int = 50) -> list[Answer]:
    """The latest posted answers, newest first, with the time from the comment to the ack
    and to the answer."""
    try:
        store = status.open_reader(settings.daemon)
    except StoreMissing:
        return []
    try:
        posted = store.transaction(jobs.recent_posted, limit)
    finally:
        store.close()
    return [Answer(MRKey(r.host, r.repo, r.iid), r.host_message_id, r.state,
                   r.comment_created_at,
                   None if r.acked_at is None else r.acked_at - r.comment_created_at,
                   None if r.posted_at is None else r.posted_at - r.comment_created_at)
            for r in posted]


def lesson_sources(settings: Settings, lessons: list[Lesson]) -> list[LessonSource]:
    """Each lesson with the thread it came from: the concession's reply job names the MR;
    the stored snapshot has the person's message and the 👎 on the concession."""
    try:
        store = status.open_reader(settings.daemon)
    except StoreMissing:
        return [LessonSource(lesson, None, "", ()) for lesson in lessons]
    try:
        sources = [lesson.source_message_id for lesson in lessons]
        by_post = {j.posted_message_id: j
                   for j in store.transaction(jobs.by_posted_ids, sources)
                   if j.posted_message_id}
        found = []
        for lesson in lessons:
            job = by_post.get(lesson.source_message_id)
            if job is None:
                found.append(LessonSource(lesson, None, "", ()))
                continue
            key = MRKey(job.host, job.repo, job.iid)
            snapshot = store.transaction(snapshots.load, key)
            messages = {m.id: m for t in (snapshot.threads if snapshot else ())
                        for m in t.messages}
            asked = messages.get(job.host_message_id)
            concession = messages.get(lesson.source_message_id)
            vetoes = () if concession is None else tuple(
                r.user.username for r in concession.reactions if r.name in THUMBS_DOWN)
            found.append(LessonSource(lesson, key, asked.body if asked else "", vetoes))
        return found
    finally:
        store.close()


def conversation(settings: Settings, key: MRKey) -> status.Graph:
    """One MR's stored graph, as `livereview conversation`; BadInput when it is unknown."""
    try:
        return status.conversation(settings, key)
    except (status.UnknownMR, StoreMissing) as exc:
        raise BadInput(str(exc)) from None
