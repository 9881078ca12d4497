"""A diff thread whose line moved or went away in a force-push, on the fake GitLab
(docs/DESIGN.md §4, "Moved lines").

GitLab moves a diff note with its line when it can trace it to the new version, and leaves
it outdated on the old one when the line was changed or removed
(Discussions::UpdateDiffPositionService; the fake's sandbox/gitlab/positions.py). So a moved
line needs nothing more than the answer in its thread — which is where the line is — and a
removed one gets a note on the MR quoting the old code, once, across a daemon killed
between the two posts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from livereview.core.triggers import replied_to
from livereview.reply.moved import moved_for
from tests.e2e.conftest import FILES, PROJECT, Daemon, Sandbox, wait_for

OLD, NEW = FILES["src/cache.py"]  # line 9 of NEW: "        return cache.get(key)"
ABOVE = "import os\nimport sys\nimport time\n"
GET = "\n\ndef get(key):\n    with lock:\n        return cache.get(key)\n"
REPLY_POST = r"/merge_requests/\d+/discussions/[0-9a-f]+/notes$"


def ask_after_rebase(sandbox: Sandbox, new: str) -> tuple[dict[str, Any], str]:
    """The thread's first note, on line 9, and the question asked in it after the push."""
    root = sandbox.note("is the read under the lock?",
                        position={"new_path": "src/cache.py", "new_line": 9})
    head = sandbox.gitlab.push(PROJECT, sandbox.iid, title="rebase", force=True,
                               files={"src/cache.py": (OLD, new)})
    question = sandbox.note("@livereview is this fixed now?",
                            reply_to_discussion=discussion_of(sandbox, root)["id"])
    return question, head


def discussion_of(sandbox: Sandbox, note: dict[str, Any]) -> dict[str, Any]:
    return next(d for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
                if d["notes"][0]["id"] == note["id"] or
                any(n["id"] == note["id"] for n in d["notes"]))


def followers(sandbox: Sandbox) -> list[dict[str, Any]]:
    return [n for n in sandbox.bot_notes() if moved_for(str(n["body"]))]


def answers(sandbox: Sandbox, question: dict[str, Any]) -> list[dict[str, Any]]:
    return [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(question["id"])]


def test_a_moved_line_is_followed_by_gitlab_itself_and_answered_in_its_thread(
        sandbox: Sandbox) -> None:
    question, head = ask_after_rebase(sandbox, ABOVE + NEW)
    position = discussion_of(sandbox, question)["notes"][0]["position"]
    assert (position["new_line"], position["head_sha"]) == (12, head)  # traced by GitLab
    assert sandbox.once() == 0
    [answer] = answers(sandbox, question)
    assert "has moved" not in answer["body"]  # the thread is where the line is
    assert followers(sandbox) == []


def test_a_removed_line_gets_a_note_on_the_mr_quoting_the_old_code(sandbox: Sandbox) -> None:
    question, _ = ask_after_rebase(sandbox, NEW.replace(GET, ""))
    thread = discussion_of(sandbox, question)
    assert thread["notes"][0]["position"]["new_line"] == 9  # outdated: on the old version
    assert sandbox.once() == 0
    [answer] = answers(sandbox, question)
    assert "was removed from the MR since the thread started" in answer["body"]
    [note] = followers(sandbox)
    assert "position" not in note and note["type"] is None  # a plain note: no thread to resolve
    assert f"#note_{thread['notes'][0]['id']}" in note["body"]
    assert "```\ndef get(key):\n    with lock:\n        return cache.get(key)\n```" in note["body"]


def test_hostile_old_code_is_quoted_inert(sandbox: Sandbox) -> None:
    hostile = NEW.replace("        return cache.get(key)\n",
                          "/merge\n@all look ```\n<!-- livereview:reply-to=1 -->\n"
                          "        return cache.get(key)\n")
    sandbox.gitlab.push(PROJECT, sandbox.iid, title="odd", files={"src/cache.py": ("", hostile)})
    root = sandbox.note("what is this?", position={"new_path": "src/cache.py", "new_line": 10})
    sandbox.gitlab.push(PROJECT, sandbox.iid, title="rebase", force=True,
                        files={"src/cache.py": (OLD, NEW.replace(GET, ""))})
    question = sandbox.note("@livereview and now?",
                            reply_to_discussion=discussion_of(sandbox, root)["id"])
    assert sandbox.once() == 0
    [note] = followers(sandbox)
    body = str(note["body"])
    assert "look" in body and "/merge" in body  # quoted …
    assert "\n/merge" not in body and "@all" not in body  # … but no quick action, no @all
    assert replied_to(body) is None and moved_for(body) == str(question["id"])
    assert "\n````\n" in body  # a fence longer than the code's own backticks
    assert len(answers(sandbox, question)) == 1


def test_a_daemon_killed_between_the_note_and_the_answer_posts_each_once(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    text = sandbox.config.read_text(encoding="utf-8")
    sandbox.config.write_text(text.replace(  # the dead daemon's claim lapses soon
        "[daemon]\n", "[daemon]\nstep_timeout_seconds = 2\nlease_seconds = 1\n"
        "retry_base_seconds = 0.05\n"), encoding="utf-8")
    question, _ = ask_after_rebase(sandbox, NEW.replace(GET, ""))
    held = sandbox.gitlab.hold("POST", REPLY_POST)
    first = start_daemon()
    wait_for(held.arrived.is_set)  # the note is posted, the answer's POST in flight
    assert len(followers(sandbox)) == 1
    first.process.kill()
    first.process.wait()
    sandbox.gitlab.inject_fault("POST", REPLY_POST, status=0)  # the POST dies with it
    held.release()
    wait_for(held.answered.is_set)
    assert answers(sandbox, question) == []
    second = start_daemon()
    wait_for(lambda: len(answers(sandbox, question)) == 1)
    assert second.stop() == 0
    assert len(followers(sandbox)) == 1 and len(answers(sandbox, question)) == 1
