"""A finding's severity, category and confidence, from the model's structured answer to
the posted thread, the store and `livereview review --json`; the knowledge the review's
prompt showed, with its kind and relevance (on the fake GitLab, through the real CLI)."""

from __future__ import annotations

import json

import pytest

from livereview.cli.commands import main
from livereview.review.render import marked
from livereview.sandbox.llm_server import LLMFault
from tests.databases import query
from tests.e2e.conftest import PROJECT, Sandbox

FINDINGS = {"src/cache.py": [
    {"severity": "critical", "category": "security", "confidence": 0.9, "path": "src/cache.py",
     "line": 8, "side": "new", "body": "The lock is never released on error\n\nWhy."},
    {"severity": "warning", "category": "reliability", "confidence": 0.2,
     "path": "src/cache.py", "line": 7, "side": "old", "body": "A guess\n\nMaybe."},
]}


def configure(sandbox: Sandbox) -> None:
    project = sandbox.gitlab.find_project(PROJECT)
    with sandbox.gitlab.lock:  # files of the repo on every branch: not part of the diff
        for head in set(project.branches.values()):
            project.trees[head]["docs/caching.md"] = "Every shared cache needs a lock.\n"
            project.trees[head]["STYLE.md"] = "Four spaces.\n"
    sandbox.config.write_text(sandbox.config.read_text().replace(
        f'path = "{PROJECT}"',
        f'path = "{PROJECT}"\nknowledge = ["STYLE.md", "docs/caching.md"]')
        + "\n[review]\nmin_confidence = 0.5\n", encoding="utf-8")


def test_the_posted_finding_the_store_and_the_json_carry_its_fields(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    configure(sandbox)
    sandbox.llm.llm.review_findings = FINDINGS
    target = ["--config", str(sandbox.config), "review", f"gl:{PROJECT}!{sandbox.iid}",
              "--json"]
    assert main(target) == 0
    out = json.loads(capsys.readouterr().out)
    # The doubtful warning is below review.min_confidence: left out, not posted.
    assert [(f["severity"], f["category"], f["confidence"]) for f in out["findings"]] == [
        ("critical", "security", 0.9)]
    assert query(sandbox.db, "SELECT severity, category, confidence FROM review_findings"
                 ) == [("critical", "security", 0.9)]
    [thread] = [n for n in sandbox.bot_notes()
                if (marked(str(n["body"])) or ("", ""))[1] == "finding=1"]
    assert str(thread["body"]).startswith(
        "🔴 **Critical · security** (confidence 90%) — The lock is never released")
    # The knowledge the prompt showed: the doc about caches first, with kind and relevance.
    assert [(k["source"], k["kind"]) for k in out["knowledge"]] == [
        ("docs/caching.md", "doc"), ("STYLE.md", "doc")]
    first, second = (k["relevance"] for k in out["knowledge"])
    assert (first, second) == (1.0, 0.0)  # the one word of src/cache.py: "cache"
    prompt = sandbox.llm.llm.prompts[-1][-1]["content"]
    assert prompt.index(f"- docs/caching.md (doc, relevance {first:.2f})") < prompt.index(
        f"- STYLE.md (doc, relevance {second:.2f})")


def test_an_answers_citations_are_stored_with_their_kind_and_relevance(
        sandbox: Sandbox) -> None:
    configure(sandbox)
    sandbox.llm.llm.faults.append(LLMFault(content=json.dumps({
        "mode": "clarification", "severity": "none", "answer": "Yes: see the rule.",
        "concede": False, "lesson": None, "resolve": False, "citations": [
            {"ref": "docs/caching.md", "title": "the caching rule"},
            {"ref": "src/cache.py:8", "title": "the lock"},
            {"ref": "https://wiki.example/locks", "title": "locks"}]})))
    sandbox.note("@livereview why a lock here?",
                 position={"new_path": "src/cache.py", "new_line": 9})
    assert sandbox.once() == 0
    rows = query(sandbox.db, "SELECT url, kind, relevance FROM knowledge_refs ORDER BY id")
    assert rows == [("docs/caching.md", "doc", 1.0), ("src/cache.py:8", "code", 0.0),
                    ("https://wiki.example/locks", "link", 0.0)]
