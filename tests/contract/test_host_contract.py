"""One suite, every host: what the daemon relies on from a host adapter, checked against
each host's stateful fake through the host-agnostic driver (drivers.py)."""

from __future__ import annotations

import pytest

from livereview.core.lessons import THUMBS_DOWN
from livereview.core.model import Message, MRKey, Snapshot, Thread
from livereview.core.triggers import replied_to, reply_marker
from livereview.hosts.base import (
    AuthFailed,
    Forbidden,
    NotFound,
    PacedInbox,
    RateLimited,
    Transient,
)
from livereview.hosts.reactions import ack_reaction
from livereview.reply.context import hunk_at
from tests.contract.drivers import NEW, PATH, Driver


def find(snapshot: Snapshot | Thread, body: str) -> tuple[Thread, Message]:
    threads = snapshot.threads if isinstance(snapshot, Snapshot) else (snapshot,)
    found = [(t, m) for t in threads for m in t.messages if m.body == body]
    assert len(found) == 1, f"{body!r}: {len(found)} messages"
    return found[0]


async def opened(driver: Driver, *comments: str) -> tuple[MRKey, Snapshot]:
    """An MR with a general comment and a diff thread (question + a human reply)."""
    iid = driver.open_mr("Guard the cache with a lock")
    driver.general_comment(iid, "general: is this needed?")
    driver.diff_comment(iid, "diff: why hold the lock for a read?", line=9)
    snapshot = await driver.host.fetch_mr(driver.repo, iid)
    driver.reply_in(iid, find(snapshot, "diff: why hold the lock for a read?")[0],
                    "diff: a human follow-up")
    for body in comments:
        driver.general_comment(iid, body)
    return MRKey(driver.name, driver.repo, iid), await driver.host.fetch_mr(driver.repo, iid)


async def test_identity_is_the_token_owner(driver: Driver) -> None:
    me = await driver.host.whoami()
    assert (me.host, me.username) == (driver.name, driver.bot)
    assert me.user_id
    assert await driver.host.repo_exists(driver.repo)
    assert not await driver.host.repo_exists("acme/nope")


async def test_a_snapshot_has_the_mr_its_threads_anchors_and_commits(driver: Driver) -> None:
    key, snap = await opened(driver)
    assert snap.mr.key == key
    assert (snap.mr.title, snap.mr.state) == ("Guard the cache with a lock", "opened")
    assert snap.mr.description == "About Guard the cache with a lock."
    assert snap.mr.author.username == "bob"
    assert snap.mr.web_url and snap.mr.head_sha and snap.mr.base_sha
    assert snap.commits is not None  # fetch_mr reads them on every host
    assert snap.commits[0].sha == snap.mr.head_sha  # newest first
    general, question = find(snap, "general: is this needed?")
    assert general.anchor is None and general.messages == (question,)
    assert question.author.username == "alice" and question.thread_id == general.id
    diff, _ = find(snap, "diff: why hold the lock for a read?")
    assert [m.body for m in diff.messages] == ["diff: why hold the lock for a read?",
                                               "diff: a human follow-up"]
    assert all(m.thread_id == diff.id for m in diff.messages)
    assert diff.anchor is not None
    assert (diff.anchor.new_path, diff.anchor.new_line) == (PATH, 9)
    assert diff.anchor.head_sha == snap.mr.head_sha
    assert diff.resolvable and not diff.resolved
    assert len(snap.messages()) == 3  # ids are unique across the MR


async def test_changes_since_a_watermark(driver: Driver) -> None:
    a, b = driver.open_mr("A"), driver.open_mr("B")
    assert {a, b} <= {mr.iid for mr in await driver.host.list_changed_mrs((driver.repo,), None)}
    driver.general_comment(b, "on B, before the watermark")
    since = driver.clock.advance(300)
    driver.clock.advance(5)
    driver.general_comment(a, "a fresh comment on A")
    changed = await driver.host.list_changed_mrs((driver.repo,), since)
    assert [(mr.repo, mr.iid) for mr in changed] == [(driver.repo, a)]
    assert changed[0].updated_at >= since
    # An edit that mentions the bot counts as a change too, whether or not the host bumps
    # the MR for it: in the listing, or (GitHub: the notifications) in the mention inbox.
    snap = await driver.host.fetch_mr(driver.repo, b)
    since = driver.clock.advance(300)
    driver.clock.advance(5)
    driver.edit(b, find(snap, "on B, before the watermark")[1].id, "on B, @livereview now")
    seen = {mr.iid for mr in await driver.host.list_changed_mrs((driver.repo,), since)}
    if isinstance(driver.host, PacedInbox):
        seen |= {key.iid for key in await driver.host.mention_inbox((driver.repo,))}
    assert b in seen


async def test_the_hosts_own_bot_markers_mark_the_author(driver: Driver) -> None:
    """Whatever its timing, an account the host calls automated is never taken for a human."""
    iid = driver.open_mr("Bump a dependency")
    automated = driver.automated_account()
    driver.general_comment(iid, "Bumped by a tool.", author=automated)
    driver.general_comment(iid, "Thanks!")
    snap = await driver.host.fetch_mr(driver.repo, iid)
    assert {(m.author.username, m.author.bot) for t in snap.threads for m in t.messages} == {
        (automated, True), ("alice", False)}
    assert not snap.mr.author.bot


async def test_reply_lands_in_the_diff_thread(driver: Driver) -> None:
    key, snap = await opened(driver)
    diff, question = find(snap, "diff: why hold the lock for a read?")
    body = f"Reads race with writes.\n\n{reply_marker(question.id)}"
    posted = await driver.host.reply(key, diff.id, body)
    after = await driver.host.fetch_mr(driver.repo, key.iid)
    thread, message = find(after, body)
    assert thread.id == diff.id and message.id == posted.id
    assert thread.messages[-1].author.username == driver.bot


async def test_reply_to_a_general_comment(driver: Driver) -> None:
    key, snap = await opened(driver)
    general, question = find(snap, "general: is this needed?")
    body = f"Yes.\n\n{reply_marker(question.id)}"
    posted = await driver.host.reply(key, general.id, body)
    after = await driver.host.fetch_mr(driver.repo, key.iid)
    if driver.host.capabilities.threaded_general_comments:
        assert find(after, body)[0].id == general.id
        return
    # No threading (GitHub's conversation tab): a new general comment quoting the question.
    [(thread, message)] = [(t, m) for t in after.threads for m in t.messages
                           if m.id == posted.id]
    assert thread.id != general.id and thread.anchor is None
    assert message.body == f"> general: is this needed?\n\n{body}"


async def test_react_and_an_existing_reaction_is_success(driver: Driver) -> None:
    key, snap = await opened(driver)
    if not driver.host.capabilities.reactions:  # says so: the worker acks by a reply
        with pytest.raises(Forbidden):
            await driver.host.react(key, find(snap, "general: is this needed?")[1].id, "eyes")
        return
    emoji = ack_reaction(driver.host.type, None)  # one each host offers
    for body in ("general: is this needed?", "diff: a human follow-up"):
        message = find(snap, body)[1]
        await driver.host.react(key, message.id, emoji)
        await driver.host.react(key, message.id, emoji)  # already there: still fine
        assert driver.reactions(key.iid, message.id) == [(emoji, driver.bot)]


async def test_reactions_are_read_for_the_messages_asked(driver: Driver) -> None:
    key, snap = await opened(driver)
    asked = {find(snap, body)[1].id: body for body in ("general: is this needed?",
                                                       "diff: a human follow-up")}
    if not driver.host.capabilities.reactions:
        after = await driver.host.fetch_mr(driver.repo, key.iid, reactions_for=frozenset(asked))
        assert {m.id for m in after.messages().values() if not m.reactions} >= set(asked)
        return
    for message_id in asked:
        driver.thumbs_down(key.iid, message_id)
    other = find(snap, "diff: why hold the lock for a read?")[1]
    driver.thumbs_down(key.iid, other.id)
    after = await driver.host.fetch_mr(driver.repo, key.iid, reactions_for=frozenset(asked))
    for body in asked.values():
        [reaction] = find(after, body)[1].reactions
        assert reaction.name in THUMBS_DOWN and reaction.user.username == "alice"
        # When it was made, where the host says: GitLab's award and GitHub's reaction carry
        # `created_at`; Bitbucket Data Center's reactions have no time.
        dated = driver.host.type in {"gitlab", "github"}
        assert (reaction.created_at is not None) is dated
        if reaction.created_at is not None:
            assert reaction.created_at.tzinfo is not None
    assert find(after, other.body)[1].reactions == ()  # not asked: not read


async def test_the_head_commit_carries_its_message_and_author(driver: Driver) -> None:
    key, _ = await opened(driver)
    driver.push(key.iid, "lock = threading.RLock()\n")
    [head, *_] = (await driver.host.fetch_mr(driver.repo, key.iid)).commits or ()
    assert head.message.startswith(head.title) and head.title
    assert head.author and "@" not in head.author  # a name, never an e-mail address


async def test_resolve_and_reopen_a_diff_thread(driver: Driver) -> None:
    key, snap = await opened(driver)
    diff = find(snap, "diff: why hold the lock for a read?")[0]
    await driver.host.resolve(key, diff.id)
    assert driver.resolved(key.iid, diff.id)
    assert find(await driver.host.fetch_mr(driver.repo, key.iid),
                "diff: a human follow-up")[0].resolved
    await driver.host.resolve(key, diff.id, resolved=False)
    assert not driver.resolved(key.iid, diff.id)
    assert not find(await driver.host.fetch_mr(driver.repo, key.iid),
                    "diff: a human follow-up")[0].resolved


async def test_every_page_of_a_long_conversation_is_read(driver: Driver) -> None:
    _, snap = await opened(driver, *(f"comment {i}" for i in range(130)))
    bodies = {m.body for m in snap.messages().values()}
    assert {f"comment {i}" for i in range(130)} <= bodies
    assert len(snap.messages()) == 133


async def test_the_diff_and_the_diff_of_an_older_version(driver: Driver) -> None:
    key, snap = await opened(driver)
    diff = find(snap, "diff: why hold the lock for a read?")[0]
    assert diff.anchor is not None
    hunk = hunk_at(await driver.host.diff(key), diff.anchor)
    assert hunk is not None and ">>    9 +        return cache.get(key)" in hunk
    driver.push(key.iid, "# header\n# more\n" + NEW.replace("get(key)", "get(key, None)"))
    after = await driver.host.fetch_mr(driver.repo, key.iid)
    assert after.mr.head_sha != snap.mr.head_sha
    assert snap.mr.head_sha in {c.sha for c in after.commits or ()}
    # The push changed the commented lines: the thread stays anchored to the version it
    # was written on, and the diff of that version still has its line.
    moved = find(after, "diff: why hold the lock for a read?")[0].anchor
    assert moved is not None and moved.head_sha == snap.mr.head_sha
    old = hunk_at(await driver.host.diff(key, moved.head_sha), moved)
    assert old is not None and ">>    9 +        return cache.get(key)" in old
    text = await driver.host.file_content(driver.repo, snap.mr.head_sha, PATH)
    assert (text, await driver.host.file_content(driver.repo, after.mr.head_sha, PATH)) == (
        NEW, "# header\n# more\n" + NEW.replace("get(key)", "get(key, None)"))


async def test_a_general_comment_is_posted_as_its_own_thread(driver: Driver) -> None:
    key, _ = await opened(driver)
    posted = await driver.host.comment(key, "A summary of this review.")
    thread, message = find(await driver.host.fetch_mr(driver.repo, key.iid),
                           "A summary of this review.")
    assert message.id == posted.id and thread.anchor is None
    assert message.author.username == driver.bot


async def test_missing_forbidden_and_bad_token_are_typed(driver: Driver) -> None:
    key, _ = await opened(driver)
    with pytest.raises(NotFound):
        await driver.host.fetch_mr(driver.repo, 999)
    driver.fail("fetch", 403)
    with pytest.raises(Forbidden):
        await driver.host.fetch_mr(driver.repo, key.iid)
    stranger = driver.host_with_token("not-a-valid-token")
    try:
        with pytest.raises(AuthFailed):
            await stranger.whoami()
    finally:
        await stranger.close()


async def test_rate_limited_long_waits_go_back_to_the_caller(driver: Driver) -> None:
    key, _ = await opened(driver)
    driver.rate_limit("fetch", retry_after=120)
    with pytest.raises(RateLimited) as caught:
        await driver.host.fetch_mr(driver.repo, key.iid)
    assert caught.value.retry_after == 120


async def test_short_rate_limits_and_5xx_are_retried(driver: Driver) -> None:
    key, _ = await opened(driver)
    driver.rate_limit("fetch", retry_after=0)
    assert (await driver.host.fetch_mr(driver.repo, key.iid)).mr.key == key
    driver.rate_limit("react", retry_after=0)  # refused before any work: a POST is retried
    thread, message = find(await driver.host.fetch_mr(driver.repo, key.iid),
                           "general: is this needed?")
    if driver.host.capabilities.reactions:
        emoji = ack_reaction(driver.host.type, None)
        await driver.host.react(key, message.id, emoji)
        assert driver.reactions(key.iid, message.id) == [(emoji, driver.bot)]
    else:  # the acknowledgement is a reply: posted once
        posted = await driver.host.reply(key, thread.id, "Looking into it.")
        assert find(await driver.host.fetch_mr(driver.repo, key.iid),
                    "Looking into it.")[1].id == posted.id
    driver.fail("fetch", 502)
    assert (await driver.host.fetch_mr(driver.repo, key.iid)).mr.key == key


@pytest.mark.parametrize("question_body", ["diff: a human follow-up",
                                           "general: is this needed?"])
async def test_a_reply_whose_response_was_lost_is_found_again(
        driver: Driver, question_body: str) -> None:
    """The POST reached the host but the answer never came back: re-reading the thread
    finds the reply by its marker (the worker adopts it instead of posting twice)."""
    key, snap = await opened(driver)
    thread, question = find(snap, question_body)
    body = f"The answer.\n\n{reply_marker(question.id)}"
    driver.fail("reply", 0, after_handling=True)
    with pytest.raises(Transient):
        await driver.host.reply(key, thread.id, body)
    again = await driver.host.fetch_thread(key, thread.id)
    assert again.id == thread.id and question.id in {m.id for m in again.messages}
    mine = [m for m in again.messages if m.author.username == driver.bot
            and replied_to(m.body) == question.id]
    assert len(mine) == 1


async def test_list_files_of_a_folder(driver: Driver) -> None:
    key, snapshot = await opened(driver)
    head = snapshot.mr.head_sha
    assert PATH in await driver.host.list_files(key.repo, head, PATH.rsplit("/", 1)[0])
    with pytest.raises(NotFound):
        await driver.host.list_files(key.repo, head, "no/such/folder")
