"""The MR tools beside the daemon on the GitLab sandbox: a comment the daemon answered and
one a tool call answered are both left out of `mr comments`, in a new process too (the
state is in the store), and `mr replied` lists both with their times."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from livereview.cli.commands import main
from livereview.core.triggers import replied_to
from tests.e2e.conftest import PROJECT, TOKEN, Sandbox


def enable_writes(sandbox: Sandbox) -> None:
    text = sandbox.config.read_text(encoding="utf-8")
    sandbox.config.write_text(text.replace('token_env = "LIVEREVIEW_E2E_TOKEN"',
                                           'token_env = "LIVEREVIEW_E2E_TOKEN"\n'
                                           "agent_writes = true"), encoding="utf-8")


def mr_json(sandbox: Sandbox, *args: str) -> Any:
    """`livereview mr … --json` in a process of its own (a restart, every time)."""
    done = subprocess.run(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(sandbox.config), "mr", *args,
         "--json"], capture_output=True, text=True, check=False, timeout=60,
        env={**os.environ, "LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_daemon_and_tool_replies_are_left_out_across_restarts(sandbox: Sandbox) -> None:
    enable_writes(sandbox)
    mr = f"gl:{PROJECT}!{sandbox.iid}"
    asked = sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0  # the daemon answers the mention
    other = sandbox.note("@livereview why not an RLock?")  # the agent is quicker this time
    listed = mr_json(sandbox, "comments", mr)
    assert [c["id"] for c in listed["comments"]] == [str(other["id"])]
    assert (listed["left_out_replied"], listed["left_out_own"]) == (1, 1)

    assert main(["--config", str(sandbox.config), "mr", "reply", mr, str(other["id"]),
                 "--body", "An RLock is for re-entry; nothing re-enters here."]) == 0
    after = mr_json(sandbox, "comments", mr)
    assert (after["returned"], after["left_out_replied"], after["left_out_own"]) == (0, 2, 2)
    everything = mr_json(sandbox, "comments", mr, "--include-replied")
    by_id = {c["id"]: c for c in everything["comments"]}
    assert by_id[str(asked["id"])]["replied_by"] == "daemon"
    assert by_id[str(other["id"])]["replied_by"] == "tool"

    history = mr_json(sandbox, "replied", "--repo", PROJECT)
    assert [(r["comment_id"], r["source"]) for r in history["replies"]] == [
        (str(asked["id"]), "daemon"), (str(other["id"]), "tool")]
    assert mr_json(sandbox, "replied", "--repo", "acme/elsewhere")["count"] == 0

    assert sandbox.once() == 0  # the daemon sees the tool's marker: it does not answer again
    answers = [replied_to(str(n["body"])) or "" for n in sandbox.bot_notes()]
    assert sorted(answers) == sorted([str(asked["id"]), str(other["id"])])
