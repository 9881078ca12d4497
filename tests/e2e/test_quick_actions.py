"""Nothing the bot posts on GitLab runs a quick action.

GitLab runs a note's `/merge`, `/approve`, `/close`, `/assign …` lines under the permissions
of whoever posts it: a commenter who got the bot to repeat such a line (in an answer, a
review finding or an agent's reply) would merge, approve or close with the bot's rights.
The fake GitLab does not run quick actions; these tests read what was posted the way
GitLab's extractor would (tests/quick_actions_oracle.py, its generations ported), and a
line starting with `/command` outside code blocks, which other hosts' bots read.
"""

from __future__ import annotations

import json
import re

import pytest

from livereview.cli.commands import main
from livereview.core.markdown import code_lines
from livereview.sandbox.llm_server import LLMFault
from tests.e2e.conftest import PROJECT, Sandbox
from tests.e2e.test_tools_daemon import enable_writes
from tests.quick_actions_oracle import commands

QUICK_ACTIONS = "/merge\n/approve\n/close\n/assign_reviewer me\n/label ~security"
# Code to CommonMark, not to GitLab's extractor: a `~~~` fence, a closing fence with text
# after it, an unclosed fence.
FENCED = ["~~~\n/merge\n~~~", "```\n/merge\n``` done", "```\n/approve\n/merge"]


def quick_action_lines(sandbox: Sandbox) -> list[str]:
    """Commands GitLab would run from the bot's notes, and `/command` lines outside code."""
    found = []
    for note in sandbox.bot_notes():
        body = str(note["body"])
        code = code_lines(body)
        found += [" ".join(c) for c in commands(body)]
        found += [line for i, line in enumerate(body.split("\n"))
                  if i not in code and re.match(r"[ \t]*/[a-z_]+", line)]
    return found


def test_a_parroted_comment_posts_no_quick_action(sandbox: Sandbox) -> None:
    sandbox.llm.llm.parrot = True
    sandbox.note(f"@livereview\n{QUICK_ACTIONS}")
    assert sandbox.once() == 0
    assert sandbox.bot_notes() and quick_action_lines(sandbox) == []


def test_a_model_answer_posts_no_quick_action(sandbox: Sandbox) -> None:
    sandbox.llm.llm.faults.append(LLMFault(content=(
        '{"mode": "help", "answer": "Sure.\\n/approve\\n/merge", "citations": []}')))
    sandbox.note("@livereview who knows?")
    assert sandbox.once() == 0
    assert sandbox.bot_notes() and quick_action_lines(sandbox) == []


def test_a_review_finding_posts_no_quick_action(sandbox: Sandbox) -> None:
    sandbox.llm.llm.review_findings = {"src/cache.py": [
        {"severity": "suggestion", "path": "src/cache.py", "line": 8, "side": "new",
         "body": f"fine\n{QUICK_ACTIONS}"}]}
    sandbox.note("@livereview review")
    assert sandbox.once() == 0
    assert sandbox.bot_notes() and quick_action_lines(sandbox) == []


def test_an_agent_reply_posts_no_quick_action(sandbox: Sandbox) -> None:
    enable_writes(sandbox)
    asked = sandbox.note("@livereview why?")
    assert main(["--config", str(sandbox.config), "mr", "reply", f"gl:{PROJECT}!1",
                 str(asked["id"]), "--body", "ok\n/merge"]) == 0
    assert sandbox.bot_notes() and quick_action_lines(sandbox) == []


@pytest.mark.parametrize("fenced", FENCED)
def test_a_fenced_command_in_a_model_answer_posts_no_quick_action(
        sandbox: Sandbox, fenced: str) -> None:
    answer = json.dumps({"mode": "help", "answer": f"Like this:\n\n{fenced}", "citations": []})
    sandbox.llm.llm.faults.append(LLMFault(content=answer))
    sandbox.note("@livereview how do I merge?")
    assert sandbox.once() == 0
    assert sandbox.bot_notes() and quick_action_lines(sandbox) == []


@pytest.mark.parametrize("fenced", FENCED)
def test_a_fenced_command_in_a_review_finding_posts_no_quick_action(
        sandbox: Sandbox, fenced: str) -> None:
    sandbox.llm.llm.review_findings = {"src/cache.py": [
        {"severity": "suggestion", "path": "src/cache.py", "line": 8, "side": "new",
         "body": f"fine\n\n{fenced}"}]}
    sandbox.note("@livereview review")
    assert sandbox.once() == 0
    assert len(sandbox.bot_notes()) >= 2 and quick_action_lines(sandbox) == []


@pytest.mark.parametrize("fenced", FENCED)
def test_a_fenced_command_in_an_agent_reply_posts_no_quick_action(
        sandbox: Sandbox, fenced: str) -> None:
    enable_writes(sandbox)
    asked = sandbox.note("@livereview why?")
    assert main(["--config", str(sandbox.config), "mr", "reply", f"gl:{PROJECT}!1",
                 str(asked["id"]), "--body", f"ok\n\n{fenced}"]) == 0
    assert sandbox.bot_notes() and quick_action_lines(sandbox) == []
