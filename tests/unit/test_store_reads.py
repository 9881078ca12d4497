"""store/reads.py reads a SQLite store with the standard library for `health` and `pending`;
each of its queries has an ORM twin (state.listings, jobs.listing, reviews.unfinished) that
PostgreSQL and the console use. Both are run on one store and must agree, row for row and
datetime for datetime, and must refuse the same databases with the same line."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text
from sqlmodel import Session

from livereview.core.local_model import (
    AuthorKind,
    FileStat,
    NewThread,
    RangeState,
    ReviewStatus,
    ThreadKind,
    as_dict,
)
from livereview.core.model import JobState, MRKey
from livereview.core.model_runs import ReviewState
from livereview.store import jobs, local_reads, local_reviews, replied, reviews, state
from livereview.store.db import Store
from livereview.store.engine import StoreCorrupt, StoreError, sqlite_file
from livereview.store.reads import PendingJob, PendingRun, Reader, sqlite_path
from livereview.store.tables import PollWatermark, ReplyJobRow, ReviewRunRow, ToolReply

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
INDIA = timezone(timedelta(hours=5, minutes=30))
JOB_STATES = [*(s.value for s in JobState), "from-a-newer-version"]
RUN_STATES = [*(s.value for s in ReviewState), "from-a-newer-version"]


def _seed(session: Session) -> None:
    """Every state, two repos, and datetimes with and without microseconds, written in UTC
    and in another zone (the store keeps UTC)."""
    for n, job_state in enumerate(JOB_STATES * 2):
        at = (T0 + timedelta(minutes=n, microseconds=n * 7919)).astimezone(
            INDIA if n % 2 else UTC)
        session.add(ReplyJobRow(
            key=f"gl:acme/{'api' if n % 3 else 'web'}:{n}:m{n}", host="gl",
            repo=f"acme/{'api' if n % 3 else 'web'}", iid=n, host_thread_id=f"t{n}",
            host_message_id=f"m{n}", reason="mention", state=job_state, attempts=n % 4,
            next_attempt_at=at + timedelta(seconds=30), last_error="" if n % 2 else "boom ✗",
            comment_created_at=at, created_at=at, updated_at=at))
    for n, run_state in enumerate(RUN_STATES * 2):
        at = (T0 + timedelta(hours=n, microseconds=0 if n % 2 else 123456)).astimezone(
            INDIA if n % 3 else UTC)
        session.add(ReviewRunRow(
            key=f"cli:{n}", token=f"tok{n}", host="gl" if n % 2 else "gh",
            repo=f"acme/{'api' if n % 2 else 'web'}", iid=n, trigger="cli", state=run_state,
            attempts=n, next_attempt_at=at + timedelta(minutes=1), last_error=f"e{n}",
            created_at=at, updated_at=at))
    for n in range(12):  # tool replies: done, begun (no replied_at), on a job's comment too
        session.add(ToolReply(
            host="gl", repo=f"acme/{'api' if n % 3 else 'web'}", iid=n % 4,
            comment_id=f"m{n}" if n % 2 else f"tool{n}", thread_id=f"t{n}", body_digest="d",
            started_at=T0, reply_id=None if n % 5 == 0 else f"r{n}",
            replied_at=None if n % 4 == 3 else (T0 + timedelta(seconds=n)).astimezone(INDIA)))
    for n, (host, scope) in enumerate([("gl", "*"), ("gl", "acme/api"), ("gh", "*")]):
        session.add(PollWatermark(host=host, scope=scope, first_seen_at=T0,
                                  listed_until=None if n == 1 else T0 + timedelta(seconds=n)))


def _orm_jobs(rows: list[ReplyJobRow]) -> list[PendingJob]:
    return [PendingJob(r.key, r.host, r.repo, r.iid, r.reason, r.state, r.attempts,
                       r.last_error, r.comment_created_at, r.next_attempt_at) for r in rows]


def _orm_runs(rows: list[ReviewRunRow]) -> list[PendingRun]:
    return [PendingRun(r.key, r.host, r.repo, r.iid, r.trigger, r.state, r.attempts,
                       r.last_error, r.created_at, r.next_attempt_at) for r in rows]


def _shown(row: PendingJob | PendingRun) -> tuple[str, str]:
    created = row.comment_created_at if isinstance(row, PendingJob) else row.created_at
    return created.isoformat(), row.next_attempt_at.isoformat()


@pytest.fixture
def seeded(tmp_path: Path) -> Path:
    path = tmp_path / "state.db"
    store = Store.open(f"sqlite:///{path}")
    store.transaction(_seed)
    store.close()
    return path


def test_the_plain_reads_give_what_the_orm_gives_on_the_same_store(seeded: Path) -> None:
    store = Store.open_existing(f"sqlite:///{seeded}")
    reader = Reader.open(seeded, 10.0)
    try:
        assert reader.listings() == store.transaction(state.listings)
        for states in (None, [], ["pending", "failed"], JOB_STATES[:1], JOB_STATES[-1:]):
            for repo in (None, "acme/api", "acme/nowhere"):
                plain = reader.jobs(states=states, repo=repo)
                orm = _orm_jobs(store.transaction(jobs.listing, states=states, repo=repo))
                assert plain == orm, (states, repo)
                # `pending` prints isoformat(): equal instants in another zone would differ
                assert [_shown(j) for j in plain] == [_shown(j) for j in orm]
        assert len(reader.jobs()) == 2 * len(JOB_STATES)  # the comparison saw every row
        for repo in (None, "acme/api", "acme/web"):
            runs = _orm_runs(store.transaction(reviews.unfinished, repo=repo))
            assert reader.unfinished(repo) == runs
            assert [_shown(r) for r in reader.unfinished(repo)] == [_shown(r) for r in runs]
        assert reader.unfinished()  # open and failed runs were compared, not two empties
        marks = 0
        for iid in range(len(JOB_STATES) * 2):
            for repo in ("acme/api", "acme/web"):
                key = MRKey("gl", repo, iid)
                plain_marks = reader.replied(key)
                assert plain_marks == store.transaction(replied.replied_in, key), key
                marks += len(plain_marks)
        assert marks >= 4  # posted jobs and tool replies were among them
    finally:
        reader.close()
        store.close()


def test_a_datetime_reads_back_the_same_instant_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = Store.open(f"sqlite:///{path}")

    def write(session: Session, at: datetime) -> None:
        session.execute(text("DELETE FROM poll_watermarks"))
        session.add(PollWatermark(host="gl", scope="*", first_seen_at=at, listed_until=at))

    @settings(max_examples=60, deadline=None)
    @given(st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9998, 1, 1),
                        timezones=st.sampled_from([UTC, INDIA, timezone(-timedelta(hours=7))])))
    def agree(at: datetime) -> None:
        store.transaction(write, at)
        with Reader.open(path, 10.0) as reader:
            plain = reader.listings()
        assert plain == store.transaction(state.listings) == {"gl": {"*": at}}
        assert plain["gl"]["*"] is not None and plain["gl"]["*"].tzinfo == UTC

    try:
        agree()
    finally:
        store.close()


@given(st.text(st.characters(codec="utf-8", exclude_characters="\0"),
               min_size=1, max_size=40))
def test_a_plain_sqlite_url_names_the_file_sqlalchemy_would_open(path: str) -> None:
    for url in (f"sqlite:///{path}", f"sqlite+pysqlite:///{path}", f"sqlite:////{path}"):
        plain = sqlite_path(url)
        if plain is not None:  # any other URL takes the ORM path
            assert plain == sqlite_file(url)


def test_urls_the_plain_path_leaves_to_the_orm() -> None:
    for url in ("postgresql+psycopg://u@h/db", "sqlite:///a.db?mode=ro", "sqlite:///a%20b.db",
                "sqlite:///:memory:", "sqlite+aiosqlite:///a.db", "sqlite://host/a.db"):
        assert sqlite_path(url) is None, url
    assert sqlite_path("sqlite:////var/lib/livereview/livereview.db") == Path(
        "/var/lib/livereview/livereview.db")


def _refusal(path: Path) -> tuple[type[StoreError], str]:
    """What each path says of the file: the ORM's `Store.open_existing`, the plain reader."""
    with pytest.raises(StoreError) as orm:
        Store.open_existing(f"sqlite:///{path}").close()
    with pytest.raises(StoreError) as plain:
        Reader.open(path, 10.0).close()
    assert (type(plain.value), str(plain.value)) == (type(orm.value), str(orm.value))
    return type(orm.value), str(orm.value)


def test_an_older_schema_is_refused_with_the_same_line_both_ways(seeded: Path) -> None:
    with sqlite3.connect(seeded) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '0001'")
    _kind, line = _refusal(seeded)
    assert "is older than this version of livereview" in line


def test_a_newer_schema_is_refused_with_the_same_line_both_ways(seeded: Path) -> None:
    with sqlite3.connect(seeded) as connection:
        connection.execute("UPDATE alembic_version SET version_num = '9999'")
    _kind, line = _refusal(seeded)
    assert "schema revision 9999, which this version of livereview does not know" in line


def test_another_programs_database_is_refused_with_the_same_line_both_ways(
        tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE invoices (id INTEGER)")
    _kind, line = _refusal(path)
    assert "holds tables livereview did not create (invoices)" in line


def test_a_file_that_is_no_database_is_called_damaged_both_ways(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    path.write_bytes(b"this is not a database, only text " * 200)
    kind, line = _refusal(path)
    assert kind is StoreCorrupt
    assert "is damaged" in line


def _local_reviews(session: Session) -> None:
    """Two repositories' reviews: a branch in the range column, a renamed and a binary
    file, threads on lines, on the whole review and on a removed line, replies, a reaction,
    a resolved thread and every status."""
    files = (FileStat("a.py", "a.py", "modified", 3, 1),
             FileStat("new.py", "old.py", "renamed", 0, 0),
             FileStat("logo.png", "logo.png", "added", 0, 0, True))
    for n, status in enumerate([*ReviewStatus, ReviewStatus.PENDING]):
        at = T0 + timedelta(minutes=n, microseconds=n * 101)
        repo = "/src/api" if n % 2 else "/src/web ✓"
        state = RangeState(f"main..topic{n}", f"b{n}", f"h{n}", worktree=n == 3, files=files,
                           branch="topic" if n % 2 else "")
        threads = [NewThread(ThreadKind.TODO, "a.py", n + 1, "x = 1", "Ann", AuthorKind.CODE,
                             "TODO: name it"),
                   NewThread(ThreadKind.COMMENT, "", None, "", "agent", AuthorKind.AGENT,
                             "overall"),
                   NewThread(ThreadKind.FINDING, "old.py", None, "y", "livereview",
                             AuthorKind.BOT, "gone", old_line=4)]
        review = local_reviews.create(session, repo, f"review {n}", '{"k": [1]}' if n else "",
                                      state, threads, at)
        first = review.threads[0]
        reply = local_reviews.add_message(session, review.id, first.id, "Bob",
                                          AuthorKind.HUMAN, "why?", at + timedelta(seconds=1))
        local_reviews.react(session, review.id, reply.id, "eyes", at)
        local_reviews.set_resolved(session, review.id, review.threads[1].id, True, at)
        local_reviews.set_status(session, review.id, status, at + timedelta(seconds=2))


def test_the_plain_read_of_local_reviews_gives_what_the_orm_gives(tmp_path: Path) -> None:
    path = tmp_path / "livereview.db"
    store = Store.open(f"sqlite:///{path}")
    try:
        store.transaction(_local_reviews)
        with Reader.open(path, 10.0) as reader:
            for repo in ("/src/api", "/src/web ✓", "/src/none"):
                plain = local_reads.of_repo(reader, repo)
                assert plain == store.transaction(local_reviews.of_repo, repo), repo
                assert [as_dict(r) for r in plain] == [  # what `review list --json` prints
                    as_dict(r) for r in store.transaction(local_reviews.of_repo, repo)]
            assert len(local_reads.of_repo(reader, "/src/api")) == 2
    finally:
        store.close()
