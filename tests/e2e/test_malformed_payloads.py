"""A host that breaks its own API contract for one MR costs that MR only: the cycle goes
on, and a mention on another MR is answered."""

from __future__ import annotations

import json
from typing import Any

import pytest

from livereview.core.triggers import replied_to
from tests.e2e.conftest import FILES, PROJECT, Sandbox


def without_created_at(discussions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for discussion in discussions:
        for note in discussion["notes"]:
            note.pop("created_at", None)
    return discussions


def test_one_mr_with_a_broken_note_does_not_stop_another_mrs_mention(
        sandbox: Sandbox, capfd: pytest.CaptureFixture[str]) -> None:
    sandbox.note("@livereview a question on the MR GitLab will garble")
    other = sandbox.gitlab.add_mr(PROJECT, title="Second change", author="bob", files=FILES)
    question = sandbox.gitlab.add_note(PROJECT, other, author="alice",
                                       body="@livereview is this safe?")
    sandbox.gitlab.rewrite_json("GET", rf"/merge_requests/{sandbox.iid}/discussions$",
                                without_created_at, times=1000)
    assert sandbox.once() == 0  # the listing worked: the cycle is not a failure
    [answer] = sandbox.bot_notes()
    assert replied_to(str(answer["body"])) == str(question["id"])
    logs = [json.loads(line) for line in capfd.readouterr().err.splitlines()
            if line.startswith("{")]
    [failed] = [e for e in logs if e["event"] == "mr_fetch_failed"]
    assert failed["mr"] == sandbox.iid
    assert failed["reason"] == (
        "BadResponse: GET /api/v4/projects/acme%2Fwidgets/merge_requests/1/discussions: "
        "[0].notes[0].created_at missing")
    assert not any("Traceback" in str(e) for e in logs)
