"""After a push: a follow-up review reads only what changed, does not raise again what a
human resolved, and resolves the threads of findings the new commits fixed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from livereview.review.render import marked
from tests.databases import query
from tests.e2e.conftest import PROJECT, Sandbox, write_config
from tests.e2e.test_review_gitlab import FINDINGS

CRITICAL, WARNING, _OUTSIDE = FINDINGS["src/cache.py"]
NEW_FILE = {"src/api.py": ("", "def handler(request):\n    return eval(request.body)\n")}
NEW_FINDING = {"severity": "critical", "path": "src/api.py", "line": 2, "side": "new",
               "body": "eval of request data\n\nNever evaluate what a client sent."}


def with_review_config(sandbox: Sandbox, repo_lines: str = "", review: str = "") -> None:
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db)
    text = sandbox.config.read_text(encoding="utf-8") + repo_lines
    sandbox.config.write_text(text + ("\n[review]\n" + review if review else ""),
                              encoding="utf-8")


def finding_discussions(sandbox: Sandbox) -> dict[str, dict[str, Any]]:
    """The bot's finding threads, by their first line ("🔴 **Critical** — title")."""
    out = {}
    for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid):
        first = d["notes"][0]
        if (marked(str(first["body"])) or ("", ""))[1].startswith("finding="):
            out[str(first["body"]).split("—", 1)[1].strip().splitlines()[0]] = d
    return out


def test_follow_up_after_a_push(sandbox: Sandbox, tmp_path: Path) -> None:
    with_review_config(sandbox, 'review_on = ["push"]\n')
    sandbox.llm.llm.review_findings = {"src/cache.py": [CRITICAL, WARNING]}
    sandbox.note("@livereview review")
    assert sandbox.once() == 0
    threads = finding_discussions(sandbox)
    assert set(threads) == {"The lock is never released on error",
                            "The old unguarded read is gone"}
    # A human resolves the warning's thread: it must not come back.
    warning = threads["The old unguarded read is gone"]
    sandbox.gitlab.resolve(PROJECT, sandbox.iid, str(warning["id"]), True, user="bob")
    # The push fixes the critical (the model no longer reports it), still "has" the warning,
    # and adds a file with a new problem.
    files = {"src/cache.py": ("import threading\n\ncache = {}\n\n\ndef get(key):\n"
                              "    return cache.get(key)\n",
                              "import threading\n\ncache = {}\nlock = threading.Lock()\n\n\n"
                              "def get(key):\n    with lock:\n        return cache.get(key)\n"
                              "# fixed\n"), **NEW_FILE}
    sandbox.gitlab.push(PROJECT, sandbox.iid, files=files, title="Release the lock")
    sandbox.llm.llm.review_findings = {"src/cache.py": [WARNING], "src/api.py": [NEW_FINDING]}
    prompts_before = len(sandbox.llm.llm.prompts)
    assert sandbox.once() == 0
    threads = finding_discussions(sandbox)
    assert set(threads) == {"The lock is never released on error",
                            "The old unguarded read is gone", "eval of request data"}
    fixed = threads["The lock is never released on error"]
    assert fixed["notes"][0]["resolved"] is True
    assert "Fixed by the new commits" in str(fixed["notes"][-1]["body"])
    assert not threads["eval of request data"]["notes"][0]["resolved"]
    summaries = [n for n in sandbox.bot_notes() if (marked(str(n["body"])) or ("", ""))[1]
                 == "summary"]
    assert len(summaries) == 2
    assert "1 fixed by the new commits" in str(summaries[-1]["body"])
    assert "1 resolved or answered" in str(summaries[-1]["body"])
    assert "follow-up" in str(summaries[-1]["body"])
    # Only what changed was read again: both files changed here, in one batch.
    assert len(sandbox.llm.llm.prompts) == prompts_before + 1


def test_an_unchanged_file_is_not_read_again(sandbox: Sandbox) -> None:
    with_review_config(sandbox, 'review_on = ["push"]\n')
    sandbox.llm.llm.review_findings = {"src/cache.py": [CRITICAL]}
    sandbox.note("@livereview review")
    assert sandbox.once() == 0
    sandbox.gitlab.push(PROJECT, sandbox.iid, files=NEW_FILE, title="Add the API")
    assert sandbox.once() == 0
    last = sandbox.llm.llm.prompts[-1][-1]["content"]
    assert "### file: src/api.py" in last and "### file: src/cache.py" not in last
    # The critical finding's file did not change: its thread stays open, not re-posted.
    threads = finding_discussions(sandbox)
    assert list(threads) == ["The lock is never released on error"]
    # still blocked by the open critical
    assert [v for (v,) in query(sandbox.db, "SELECT verdict FROM review_runs ORDER BY id")] \
        == ["changes_requested", "changes_requested"]
    assert not threads["The lock is never released on error"]["notes"][0]["resolved"]


def test_review_on_opened_reviews_new_mrs_but_not_drafts(sandbox: Sandbox) -> None:
    with_review_config(sandbox, 'review_on = ["opened"]\n')
    draft = sandbox.gitlab.add_mr(PROJECT, title="Draft: not yet", author="bob",
                                  files=NEW_FILE)
    assert sandbox.once() == 0
    rows = query(sandbox.db, "SELECT iid, trigger, state FROM review_runs")
    assert rows == [(sandbox.iid, "opened", "done")]
    assert draft != sandbox.iid
