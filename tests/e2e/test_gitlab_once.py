"""`livereview once` against the fake GitLab and the fake LLM: what a user sees on the MR."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

from livereview.core.triggers import replied_to
from livereview.sandbox.gitlab.model import JSON
from tests.e2e.conftest import FILES, PROJECT, Sandbox, retries_due, write_config


def replies_to(sandbox: Sandbox, note_id: object) -> list[JSON]:
    return [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(note_id)]


def discussion_of(sandbox: Sandbox, note_id: object) -> JSON:
    return next(d for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
                if any(n["id"] == note_id for n in d["notes"]))


def test_mention_in_general_comment_gets_eyes_and_one_reply_in_the_same_discussion(
        sandbox: Sandbox) -> None:
    note = sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    awards = sandbox.gitlab.awards_on(PROJECT, sandbox.iid, note["id"])
    assert [(a["name"], a["user"]["username"]) for a in awards] == [("eyes", "livereview")]
    [reply] = replies_to(sandbox, note["id"])
    thread = discussion_of(sandbox, note["id"])
    assert [n["id"] for n in thread["notes"]] == [note["id"], reply["id"]]
    assert "sandbox answer engine" in str(reply["body"])
    [prompt] = sandbox.llm.llm.prompts
    user = prompt[-1]["content"]
    assert "Guard the cache with a lock" in user and "is this lock needed?" in user


def test_mention_on_a_diff_line_is_answered_in_that_thread_with_the_hunk(
        sandbox: Sandbox) -> None:
    note = sandbox.note("@livereview why hold the lock for a read?",
                        position={"new_path": "src/cache.py", "new_line": 9})
    assert sandbox.once() == 0
    [reply] = replies_to(sandbox, note["id"])
    thread = discussion_of(sandbox, note["id"])
    assert thread["notes"][-1]["id"] == reply["id"]
    user = sandbox.llm.llm.prompts[0][-1]["content"]
    assert "file: src/cache.py, line 9" in user
    assert re.search(r">>\s+9 \+\s+return cache.get\(key\)", user), user


def test_a_reply_to_the_bots_answer_gets_another_answer(sandbox: Sandbox) -> None:
    note = sandbox.note("@livereview is this lock needed?")
    sandbox.once()
    discussion = discussion_of(sandbox, note["id"])
    follow_up = sandbox.note("But reads are atomic in CPython, no?",
                             reply_to_discussion=str(discussion["id"]))
    assert sandbox.once() == 0
    [answer] = replies_to(sandbox, follow_up["id"])
    assert discussion_of(sandbox, follow_up["id"])["notes"][-1]["id"] == answer["id"]
    assert len(sandbox.bot_notes()) == 2
    assert "you (livereview)" in sandbox.llm.llm.prompts[-1][-1]["content"]


def test_nothing_for_self_system_old_or_unmentioned_notes(sandbox: Sandbox) -> None:
    old = datetime.now(UTC) - timedelta(days=3)
    for i in range(20):
        sandbox.note(f"@livereview old question {i}", created_at=old)
    sandbox.gitlab.add_note(PROJECT, sandbox.iid, author="livereview", body="@livereview me")
    sandbox.gitlab.add_note(PROJECT, sandbox.iid, author="alice", body="@livereview",
                            system=True)
    sandbox.note("a plain comment, no mention")
    sandbox.note("`@livereview` in code does not count")
    assert sandbox.once() == 0
    assert sandbox.bot_notes() == [n for n in sandbox.bot_notes() if n["body"] == "@livereview me"]
    assert sandbox.llm.llm.prompts == []


def test_restart_does_not_answer_twice(sandbox: Sandbox) -> None:
    note = sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    assert sandbox.once() == 0
    assert sandbox.once() == 0
    assert len(replies_to(sandbox, note["id"])) == 1
    assert len(sandbox.llm.llm.prompts) == 1


def test_reply_posted_but_response_lost_is_adopted_not_posted_again(sandbox: Sandbox) -> None:
    """A crash between the reply POST and the DB commit: GitLab has the note, we don't know."""
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 retry_base_seconds=0.05)
    note = sandbox.note("@livereview is this lock needed?")
    sandbox.gitlab.inject_fault("POST", r"/discussions/[0-9a-f]+/notes$", status=0,
                                after_handling=True)
    sandbox.once()
    assert len(replies_to(sandbox, note["id"])) == 1  # it did reach GitLab
    retries_due(sandbox.db)
    assert sandbox.once() == 0
    assert len(replies_to(sandbox, note["id"])) == 1
    assert len(sandbox.llm.llm.prompts) == 1  # the stored answer was reused, not regenerated


def test_rate_limited_with_retry_after_waits_and_succeeds(sandbox: Sandbox) -> None:
    note = sandbox.note("@livereview is this lock needed?")
    sandbox.gitlab.inject_fault("GET", r"/merge_requests/\d+/discussions$", status=429,
                                headers={"Retry-After": "1"}, body='{"message":"429 Too Many"}')
    started = time.monotonic()
    assert sandbox.once() == 0
    assert time.monotonic() - started >= 0.9  # it waited as told, rather than hammering
    discussion_gets = [r for r in sandbox.gitlab.requests
                       if r[0] == "GET" and r[1].endswith("/discussions")]
    assert len(discussion_gets) == 2
    assert len(replies_to(sandbox, note["id"])) == 1


def test_no_permission_to_react_still_replies(sandbox: Sandbox) -> None:
    note = sandbox.note("@livereview is this lock needed?")
    sandbox.gitlab.inject_fault("POST", r"/award_emoji$", status=403,
                                body='{"message":"403 Forbidden"}')
    assert sandbox.once() == 0
    assert sandbox.gitlab.awards_on(PROJECT, sandbox.iid, note["id"]) == []
    assert len(replies_to(sandbox, note["id"])) == 1


def test_deleted_parent_gets_a_general_comment_quoting_the_question(sandbox: Sandbox) -> None:
    note = sandbox.note("@livereview is this lock needed?")
    sandbox.gitlab.inject_fault("POST", r"/discussions/[0-9a-f]+/notes$", status=404,
                                body='{"message":"404 Not found"}')
    assert sandbox.once() == 0
    [reply] = replies_to(sandbox, note["id"])
    # The quote reads the same, but its mention is defused: quoting pings nobody.
    assert str(reply["body"]).startswith("> @\u2060livereview is this lock needed?")
    # A note, not a new thread: it holds up no project that merges only when all threads
    # are resolved (the fallback used to open a resolvable discussion).
    assert discussion_of(sandbox, reply["id"])["individual_note"] is True
    assert reply["resolvable"] is False


def test_a_note_that_did_not_bump_updated_at_is_still_seen(sandbox: Sandbox) -> None:
    """GitLab touches an MR at most once a minute per note: the overlap window catches it."""
    first = sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    updated = sandbox.gitlab.find_mr(PROJECT, sandbox.iid).updated_at
    second = sandbox.note("@livereview and what about writes?")
    assert sandbox.gitlab.find_mr(PROJECT, sandbox.iid).updated_at == updated  # throttled
    assert sandbox.once() == 0
    assert len(replies_to(sandbox, first["id"])) == 1
    assert len(replies_to(sandbox, second["id"])) == 1


def test_a_missing_repo_does_not_stop_the_others(sandbox: Sandbox) -> None:
    sandbox.config.write_text(sandbox.config.read_text() + '\n[[repos]]\nhost = "gl"\n'
                              'path = "acme/deleted"\n')
    note = sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    assert len(replies_to(sandbox, note["id"])) == 1


def test_a_thread_from_before_a_force_push_is_answered_with_its_own_version_of_the_code(
        sandbox: Sandbox) -> None:
    note = sandbox.note("why hold the lock for a read?",
                        position={"new_path": "src/cache.py", "new_line": 9})
    old, new = FILES["src/cache.py"]
    sandbox.gitlab.push(PROJECT, sandbox.iid, force=True, title="rewrite",
                        files={"src/cache.py": (old, "# header\n# more\n" + new.replace(
                            "return cache.get(key)", "return cache.get(key, None)"))})
    discussion = str(discussion_of(sandbox, note["id"])["id"])
    ask = sandbox.note("@livereview still needed after the rebase?",
                       reply_to_discussion=discussion)
    assert sandbox.once() == 0
    assert len(replies_to(sandbox, ask["id"])) == 1
    user = unfenced(sandbox.llm.llm.prompts[-1][-1]["content"])
    assert "file: src/cache.py, line 9, of an earlier version" in user
    assert re.search(r">>\s+9 \+\s+return cache.get\(key\)$", user, re.MULTILINE), user


def test_livereview_resolve_answers_and_resolves_the_discussion(sandbox: Sandbox) -> None:
    note = sandbox.note("I renamed it as you said. @livereview resolve",
                        position={"new_path": "src/cache.py", "new_line": 9})
    assert sandbox.once() == 0
    assert len(replies_to(sandbox, note["id"])) == 1
    thread = discussion_of(sandbox, note["id"])
    assert all(n["resolved"] for n in thread["notes"] if n.get("resolvable"))


def unfenced(prompt: str) -> str:
    """The prompt with its per-prompt fence name written as a plain <untrusted> tag."""
    return re.sub(r"<(/?)untrusted-[0-9a-f]{16}>", r"<\1untrusted>", prompt)


def test_repo_knowledge_and_the_diffstat_reach_the_prompt(sandbox: Sandbox) -> None:
    project = sandbox.gitlab.find_project(PROJECT)
    with sandbox.gitlab.lock:  # a file on the target branch, as a repo would have it
        project.trees[project.branches["main"]]["CONTRIBUTING.md"] = (
            "Every shared cache needs a lock. See ADR 7.\n")
    sandbox.config.write_text(sandbox.config.read_text().replace(
        f'path = "{PROJECT}"',
        f'path = "{PROJECT}"\nknowledge = ["CONTRIBUTING.md", "docs/missing.md", '
        '"https://wiki.example/caching", '
        '{ title = "Team rule", text = "Benchmarks before locks." }]'))
    sandbox.note("@livereview is this MR ready?")
    assert sandbox.once() == 0
    user = unfenced(sandbox.llm.llm.prompts[-1][-1]["content"])
    assert "## References for this repo" in user
    assert ("<untrusted>\nCONTRIBUTING.md (doc, relevance 0.00)\n\nEvery shared cache needs a "
            "lock.") in user
    assert "<untrusted>\nhttps://wiki.example/caching (link, relevance 0.00)\n</untrusted>" in user
    assert "docs/missing.md" not in user  # missing files are logged and left out
    assert "<untrusted>\nTeam rule (snippet, relevance 0.00)\n\nBenchmarks before locks." in user
    assert "## What the MR changes\n<untrusted>\n" in user
    assert "\nsrc/cache.py | +3 -1\n" in user


def test_knowledge_globs_read_every_matching_file_of_the_folder(sandbox: Sandbox) -> None:
    project = sandbox.gitlab.find_project(PROJECT)
    with sandbox.gitlab.lock:  # ADRs on the target branch
        tree = project.trees[project.branches["main"]]
        tree["docs/adr/0001-locks.md"] = "Shared caches take a lock.\n"
        tree["docs/adr/0002-retries.md"] = "Retry only temporary errors.\n"
        tree["docs/adr/index.txt"] = "not an ADR\n"
    sandbox.config.write_text(sandbox.config.read_text().replace(
        f'path = "{PROJECT}"', f'path = "{PROJECT}"\nknowledge = ["docs/adr/*.md"]'))
    sandbox.note("@livereview does this follow our ADRs?")
    assert sandbox.once() == 0
    user = unfenced(sandbox.llm.llm.prompts[-1][-1]["content"])
    assert ("<untrusted>\ndocs/adr/0001-locks.md (doc, relevance 0.00)\n\nShared caches take "
            "a lock.") in user
    assert ("<untrusted>\ndocs/adr/0002-retries.md (doc, relevance 0.00)\n\nRetry only "
            "temporary errors.") in user
    assert "not an ADR" not in user
