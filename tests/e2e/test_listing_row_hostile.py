"""A GitLab listing row the daemon cannot make an MR of costs that MR its listing-row read
only: the listing needs just a row's iid, updated_at and state (as before MRs were read
from their rows, hosts/base.py ReadsFromListing), the odd MR is read whole, and if GitLab's
own answer for it is as odd its read fails alone, with backoff, logged once."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from livereview.core.triggers import replied_to
from livereview.sandbox.gitlab.model import JSON
from tests.e2e.conftest import FILES, PROJECT, Sandbox


def rows_changed(iids: dict[int, JSON]) -> Callable[[list[JSON]], list[JSON]]:
    """A listing rewrite: the rows of `iids` with their fields replaced."""
    def change(rows: list[JSON]) -> list[JSON]:
        return [{**row, **iids.get(int(str(row["iid"])), {})} for row in rows]
    return change


def test_one_odd_listing_row_fails_only_its_own_mr(
        sandbox: Sandbox, capfd: pytest.CaptureFixture[str]) -> None:
    sandbox.note("@livereview a question on the MR GitLab answers oddly")
    whole = sandbox.gitlab.add_mr(PROJECT, title="Read whole", author="bob", files=FILES)
    from_row = sandbox.gitlab.add_mr(PROJECT, title="Read from its row", author="bob",
                                     files=FILES)
    asked = {iid: sandbox.gitlab.add_note(PROJECT, iid, author="alice",
                                          body=f"@livereview is change {iid} safe?")
             for iid in (whole, from_row)}
    # Listed (instance-wide or per project): the first MR without `created_at`, the second
    # with a reviewer without an id — neither can be a MergeRequest, both can be listed.
    sandbox.gitlab.rewrite_json("GET", r"/merge_requests$", rows_changed({
        sandbox.iid: {"created_at": None},
        whole: {"reviewers": [{"id": None, "username": "ghost"}]}}), times=1000)
    # GitLab's own answer for the first MR is as odd: its whole read fails too.
    sandbox.gitlab.rewrite_json("GET", rf"/merge_requests/{sandbox.iid}$",
                                lambda mr: {**mr, "created_at": None}, times=1000)
    assert sandbox.once() == 0  # the listing worked: the cycle is not a failure
    answered = {replied_to(str(note["body"])) for note in sandbox.bot_notes()}
    assert answered == {str(asked[whole]["id"]), str(asked[from_row]["id"])}
    logs = [json.loads(line) for line in capfd.readouterr().err.splitlines()
            if line.startswith("{")]
    [failed] = [e for e in logs if e["event"] == "mr_fetch_failed"]
    assert failed["mr"] == sandbox.iid
    assert failed["reason"] == (
        f"BadResponse: GET /api/v4/projects/acme%2Fwidgets/merge_requests/{sandbox.iid}: "
        "created_at: expected a timestamp, got null")
    assert not any(e["event"] == "host_listing_failed" for e in logs)
    # The odd rows' MRs were read whole; the other from its row, its discussions alone.
    single = {path for _, path, _ in sandbox.gitlab.requests
              if path.startswith("/api/v4/projects/acme%2Fwidgets/merge_requests/")
              and path.count("/") == 6}
    assert f"/api/v4/projects/acme%2Fwidgets/merge_requests/{whole}" in single
    assert f"/api/v4/projects/acme%2Fwidgets/merge_requests/{sandbox.iid}" in single
