"""`[[hosts.tokens]]` on the fake GitLab: two projects, each with its own token whose user
reads that project alone (a member of it only: lib/api/helpers.rb `find_project!` answers
404 to anyone else). The users are plain accounts with personal access tokens, as
self-managed instances often give each group: GitLab does not flag them as bots, so only
"is this the bot?" tells their posts from a human's. Each project's mention is answered
under its own token's user, and neither answers what the other posted (docs/DESIGN.md
"Identities")."""

from __future__ import annotations

import asyncio
import re

import pytest

from livereview.app.daemon import App
from livereview.cli.commands import main
from livereview.core.triggers import replied_to
from livereview.metrics import Metrics
from livereview.sandbox.gitlab.model import JSON
from livereview.settings import load
from tests.e2e.conftest import BACKSTOP_SECONDS, FILES, PROJECT, TOKEN, Sandbox

BETA = "beta/gears"
BETA_TOKEN = "glpat-e2e-BETA-token-7373"
ACME_BOT = "acme-reviewer"  # the host's own token: a plain user's personal access token


@pytest.fixture
def two_tokens(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> tuple[Sandbox, str, int]:
    """The sandbox with a second project whose token is its own; returns the sandbox, the
    second token's user and the second project's MR."""
    gitlab = sandbox.gitlab
    iid = gitlab.add_mr(BETA, title="Mesh the gears", author="bob", files=FILES)
    gitlab.add_token(TOKEN, ACME_BOT, projects=(PROJECT,))
    beta_bot = "beta-reviewer"
    gitlab.add_token(BETA_TOKEN, beta_bot, projects=(BETA,))
    monkeypatch.setenv("LIVEREVIEW_E2E_BETA", BETA_TOKEN)
    text = sandbox.config.read_text(encoding="utf-8")
    text = text.replace("[[repos]]", '[[hosts.tokens]]\nrepos = ["beta/*"]\n'
                        'token_env = "LIVEREVIEW_E2E_BETA"\n\n[[repos]]', 1)
    sandbox.config.write_text(text + f'\n[[repos]]\nhost = "gl"\npath = "{BETA}"\n',
                              encoding="utf-8")
    return sandbox, beta_bot, iid


def answers(sandbox: Sandbox, note: JSON) -> list[tuple[str, str]]:
    """(project, author) of every answer to `note`, wherever it was posted."""
    mrs = ((PROJECT, sandbox.iid), (BETA, 1))
    return [(path, str(n["author"]["username"])) for path, iid in mrs
            for d in sandbox.gitlab.discussions(path, iid) for n in d["notes"]
            if replied_to(str(n["body"])) == str(note["id"])]


def test_each_projects_mention_is_answered_under_its_own_tokens_user(
        two_tokens: tuple[Sandbox, str, int]) -> None:
    sandbox, beta_bot, iid = two_tokens
    acme = sandbox.note("@livereview is this lock needed?")
    beta = sandbox.gitlab.add_note(BETA, iid, author="alice", body="@livereview why mesh?")
    assert sandbox.once() == 0
    assert answers(sandbox, acme) == [(PROJECT, ACME_BOT)]
    assert answers(sandbox, beta) == [(BETA, beta_bot)]
    # each token listed and read its own project only: the other's would have been a 404
    assert sandbox.once() == 0
    assert answers(sandbox, acme) == [(PROJECT, ACME_BOT)]
    assert answers(sandbox, beta) == [(BETA, beta_bot)]


def test_what_one_tokens_user_posted_is_the_bots_own_in_the_others_project(
        two_tokens: tuple[Sandbox, str, int]) -> None:
    sandbox, beta_bot, iid = two_tokens
    # No [bot] flag and no livereview marker: a human's note like these would be answered.
    mine = sandbox.gitlab.add_note(BETA, iid, author=ACME_BOT,
                                   body="@livereview answered in the acme thread")
    theirs = sandbox.gitlab.add_note(PROJECT, sandbox.iid, author=beta_bot,
                                     body="@livereview answered in the beta thread")
    human = sandbox.gitlab.add_note(BETA, iid, author="alice", body="@livereview and this?")
    assert sandbox.once() == 0
    assert answers(sandbox, mine) == [] and answers(sandbox, theirs) == []
    assert answers(sandbox, human) == [(BETA, beta_bot)]


def test_a_reply_to_the_answer_of_a_projects_own_token_is_answered_there(
        two_tokens: tuple[Sandbox, str, int]) -> None:
    sandbox, beta_bot, iid = two_tokens
    asked = sandbox.gitlab.add_note(BETA, iid, author="alice", body="@livereview why mesh?")
    assert sandbox.once() == 0
    [(_, author)] = answers(sandbox, asked)
    thread = next(d for d in sandbox.gitlab.discussions(BETA, iid)
                  if d["notes"][0]["id"] == asked["id"])
    follow_up = sandbox.gitlab.add_note(BETA, iid, author="alice", body="and the ratio?",
                                        reply_to_discussion=str(thread["id"]))
    assert sandbox.once() == 0
    assert author == beta_bot and answers(sandbox, follow_up) == [(BETA, beta_bot)]


def test_check_shows_each_tokens_identity_and_the_repos_it_serves(
        two_tokens: tuple[Sandbox, str, int], capsys: pytest.CaptureFixture[str]) -> None:
    sandbox, beta_bot, _ = two_tokens
    assert main(["--config", str(sandbox.config), "check"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"identity +ok +@{ACME_BOT} \(id \d+\)", out), out
    assert re.search(rf"token +ok +@{ACME_BOT} \(id \d+\) acts in every repo no "
                     r"\[\[hosts.tokens\]\] pattern matches", out), out
    assert re.search(rf"tokens\[0\] +ok +@{beta_bot} \(id \d+\) acts in beta/\*", out), out
    assert re.search(rf"{BETA} +ok +ok", out) and re.search(rf"{PROJECT} +ok +ok", out), out
    assert TOKEN not in out and BETA_TOKEN not in out


async def test_a_restart_learns_the_other_tokens_identities_before_it_polls(
        two_tokens: tuple[Sandbox, str, int]) -> None:
    """The store keeps the host's own token's identity only; starting from it alone, the
    first polls would take the other token's posts for a human's."""
    sandbox, beta_bot, _ = two_tokens
    assert await asyncio.to_thread(sandbox.once) == 0  # the identity is stored
    theirs = sandbox.gitlab.add_note(PROJECT, sandbox.iid, author=beta_bot,
                                     body="@livereview answered in the beta thread")
    human = sandbox.note("@livereview and this?")
    held = sandbox.gitlab.hold("GET", r"/api/v4/user")
    app = App.create(load(sandbox.config), metrics=Metrics())
    stop = asyncio.Event()
    daemon = asyncio.create_task(app.run(stop))
    try:
        assert await asyncio.to_thread(held.arrived.wait, BACKSTOP_SECONDS)
        # Not polling on the stored identity while the others' are being read (the lookup
        # waits up to IDENTITY_TIMEOUT_SECONDS, 10 s, for this request).
        assert app.pollers == {}
        held.release()
        async with asyncio.timeout(BACKSTOP_SECONDS):
            while not answers(sandbox, human):
                await asyncio.sleep(0.05)
    finally:
        held.release()
        stop.set()
        await daemon
        await app.close()
    assert answers(sandbox, theirs) == []
    assert app.worker.identities["gl"].also


async def test_the_other_tokens_identities_learnt_after_polling_began_judge_every_later_read(
        two_tokens: tuple[Sandbox, str, int]) -> None:
    """The host did not answer the start's lookup, so polling began on the stored identity
    (the host's own token's alone); the refresh learns the others' (`identity_changed`), and
    from then on the polls take the other token's posts for the bot's own, not a human's."""
    sandbox, beta_bot, _ = two_tokens
    assert await asyncio.to_thread(sandbox.once) == 0  # the identity is stored
    sandbox.gitlab.inject_fault("GET", r"/api/v4/user$", status=401)  # the start's lookup
    app = App.create(load(sandbox.config), metrics=Metrics())
    stop = asyncio.Event()
    daemon = asyncio.create_task(app.run(stop))
    try:
        async with asyncio.timeout(BACKSTOP_SECONDS):
            while "gl" not in app.pollers or not app.worker.identities["gl"].also:
                await asyncio.sleep(0.05)
        theirs = sandbox.gitlab.add_note(PROJECT, sandbox.iid, author=beta_bot,
                                         body="@livereview answered in the beta thread")
        human = sandbox.note("@livereview and this?")
        async with asyncio.timeout(BACKSTOP_SECONDS):
            while not answers(sandbox, human):
                await asyncio.sleep(0.05)
    finally:
        stop.set()
        await daemon
        await app.close()
    assert app.pollers["gl"].identity.also  # the refresh reached the poller
    assert answers(sandbox, theirs) == []
