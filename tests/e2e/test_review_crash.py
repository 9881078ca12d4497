"""A review never posts a finding, a summary or a notice twice: not after a lost response
(the host did the POST, the daemon never heard), not after kill -9 at any step."""

from __future__ import annotations

import signal
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from livereview.review.render import marked
from livereview.sandbox.llm_server import LLMFault
from tests.databases import instant, query
from tests.e2e.conftest import (
    GITHUB_REPO,
    PROJECT,
    TAKEOVER,
    Daemon,
    GitHubSandbox,
    Sandbox,
    wait_for,
    write_config,
    write_github_config,
)
from tests.e2e.test_review_gitlab import FINDINGS

EXPECTED = Counter({"finding=1": 1, "finding=2": 1, "summary": 1, "notify": 1})


def review_parts(bodies: list[str]) -> Counter[str]:
    return Counter(part for body in bodies if (m := marked(body)) for part in [m[1]])


def gitlab_parts(sandbox: Sandbox) -> Counter[str]:
    return review_parts([str(n["body"]) for n in sandbox.bot_notes()])


def reviews_due(db: Path | str) -> None:
    def due() -> bool:
        [(latest,)] = query(db, "SELECT max(next_attempt_at) FROM review_runs WHERE state IN "
                                "('pending', 'reviewing', 'posting', 'notifying')")
        return latest is None or instant(latest) <= datetime.now(UTC)
    wait_for(due)


def run_state(db: Path | str) -> str:
    return str(query(db, "SELECT state FROM review_runs")[0][0])


DISCUSSIONS = r"/merge_requests/\d+/discussions$"  # the findings: threads to resolve
NOTES = r"/merge_requests/\d+/notes$"  # the summary and the notice: notes, blocking nothing


@pytest.mark.parametrize(("path", "skip"), [(DISCUSSIONS, 0), (DISCUSSIONS, 1), (NOTES, 0),
                                            (NOTES, 1)])  # findings 1, 2, summary, notice
def test_gitlab_lost_response_at_each_post_is_adopted(sandbox: Sandbox, path: str, skip: int
                                                      ) -> None:
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 retry_base_seconds=0.05)
    sandbox.llm.llm.review_findings = FINDINGS
    sandbox.note("@livereview review")
    for _ in range(skip):  # the first `skip` POSTs go through unchanged
        sandbox.gitlab.rewrite_json("POST", path, lambda body: body)
    sandbox.gitlab.inject_fault("POST", path, status=0, after_handling=True)
    sandbox.once()
    assert run_state(sandbox.db) != "done"
    for _ in range(3):
        reviews_due(sandbox.db)
        sandbox.once()
        if run_state(sandbox.db) == "done":
            break
    assert run_state(sandbox.db) == "done"
    assert gitlab_parts(sandbox) == EXPECTED
    assert len(sandbox.llm.llm.prompts) == 1  # the diff was read once


@pytest.mark.parametrize("path", [r"/pulls/\d+/reviews$", r"/issues/\d+/comments$"])
def test_github_lost_response_is_adopted(gh: GitHubSandbox, tmp_path: object, path: str
                                         ) -> None:
    db = gh.config.parent / "state" / "lr.db"
    write_github_config(gh.config, gh.server.enterprise_url, gh.llm.url, db,
                        retry_base_seconds=0.05)
    gh.llm.llm.review_findings = FINDINGS
    gh.comment("@livereview review")
    gh.github.inject_fault("POST", path, status=0, after_handling=True)
    gh.once()
    for _ in range(3):
        reviews_due(db)
        gh.once()
        if run_state(db) == "done":
            break
    assert run_state(db) == "done"
    pr = gh.github.find_issue(GITHUB_REPO, gh.number, pull=True)
    bodies = [r.body for r in pr.reviews if r.user.login == "livereview"]
    bodies += [c["body"] for c in gh.github.comments_by("livereview")]  # inline ones too
    assert review_parts(bodies) == EXPECTED


@pytest.mark.parametrize("kill_after", [1, 2, 3, 4])
def test_kill_9_after_each_post_never_duplicates(sandbox: Sandbox,
                                                 start_daemon: Callable[[], Daemon],
                                                 kill_after: int) -> None:
    """The daemon dies the moment the k-th review body is on GitLab (its response may still
    be on the wire); the next start finishes the review without posting anything twice."""
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 **TAKEOVER)
    sandbox.llm.llm.review_findings = FINDINGS
    sandbox.gitlab_server.latency_seconds = 0.2  # so the kill lands inside the review
    sandbox.note("@livereview review")
    daemon = start_daemon()
    wait_for(lambda: sum(gitlab_parts(sandbox).values()) >= kill_after, timeout=60)
    daemon.process.send_signal(signal.SIGKILL)
    daemon.process.wait()
    if kill_after < 4:  # the POSTs still to come take 0.2 s each: the kill landed mid-review
        assert run_state(sandbox.db) != "done"
    final = start_daemon()
    wait_for(lambda: run_state(sandbox.db) == "done", timeout=60)
    wait_for(lambda: "daemon_started" in final.output(), timeout=60)
    assert final.stop() == 0
    assert gitlab_parts(sandbox) == EXPECTED


def test_a_failure_while_reading_resumes_after_the_last_batch_stored(sandbox: Sandbox) -> None:
    """Each batch's findings are stored with the file cursor: a run that fails in the middle
    of the diff asks the model only about the files after it, and stores nothing twice."""
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                 retry_base_seconds=0.05)
    text = sandbox.config.read_text(encoding="utf-8")
    sandbox.config.write_text(text + "\n[review]\nbatch_chars = 1000\n", encoding="utf-8")
    files = {f"src/m{n}.py": ("", f"value = {n}\n" * 120) for n in range(4)}
    iid = sandbox.gitlab.add_mr(PROJECT, title="Four files", author="bob", files=files)
    sandbox.llm.llm.review_findings = {path: [{
        "severity": "warning", "path": path, "line": 1, "side": "new", "body": f"In {path}"}]
        for path in files}
    sandbox.gitlab.add_note(PROJECT, iid, author="alice", body="@livereview review")
    # One file per batch: the first two are answered, the third fails (with the client's
    # own two retries), then the model answers again.
    sandbox.llm.llm.faults = [LLMFault(status=200), LLMFault(status=200),
                              *[LLMFault(status=500) for _ in range(3)]]
    calls_before = len(sandbox.llm.llm.prompts)
    sandbox.once()
    [(done,)] = query(sandbox.db, "SELECT files_done FROM review_runs WHERE iid = :iid",
                      iid=iid)
    assert done == 2  # two files stored, their findings with them
    for _ in range(3):
        reviews_due(sandbox.db)
        sandbox.once()
    assert run_state(sandbox.db) == "done"
    prompts = [p[-1]["content"] for p in sandbox.llm.llm.prompts[calls_before:]]
    shown = [path for p in prompts for path in files if f"### file: {path} " in p]
    # Every file answered once; only the failed one was sent again (by the client's retries
    # and by the run's retry): never one whose findings were stored.
    assert sorted(set(shown)) == sorted(files)
    assert [p for p in files if shown.count(p) > 1] == ["src/m2.py"]
    rows = query(sandbox.db, "SELECT path FROM review_findings WHERE iid = :iid", iid=iid)
    assert sorted(p for (p,) in rows) == sorted(files)
