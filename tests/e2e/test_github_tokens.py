"""`[[hosts.tokens]]` on the fake GitHub: a second organisation with its own machine user's
token. Each organisation's mention is answered under its own token's login, and what the
other login wrote is the bot's own (docs/DESIGN.md "Identities"). The fake does not limit
what a token may read (every token sees every repo), so this shows the routing by who
posted, not by what a token could not read (the GitLab test shows that)."""

from __future__ import annotations

import pytest

from livereview.core.triggers import replied_to
from tests.e2e.conftest import GITHUB_FILES, GitHubSandbox

GLOBEX = "globex/gears"
GLOBEX_TOKEN = "ghp_e2e-GLOBEX-token-7373"
GLOBEX_BOT = "globex-reviewer"


@pytest.fixture
def two_orgs(gh: GitHubSandbox, monkeypatch: pytest.MonkeyPatch) -> tuple[GitHubSandbox, int]:
    github = gh.github
    number = github.add_pr(GLOBEX, title="Mesh the gears", author="bob", files=GITHUB_FILES)
    github.add_user(GLOBEX_BOT)
    github.tokens[GLOBEX_TOKEN] = GLOBEX_BOT
    monkeypatch.setenv("LIVEREVIEW_E2E_GLOBEX", GLOBEX_TOKEN)
    text = gh.config.read_text(encoding="utf-8").replace(
        "[[repos]]", '[[hosts.tokens]]\nrepos = ["globex/*"]\n'
        'token_env = "LIVEREVIEW_E2E_GLOBEX"\n\n[[repos]]', 1)
    gh.config.write_text(text + f'\n[[repos]]\nhost = "gh"\npath = "{GLOBEX}"\n',
                         encoding="utf-8")
    return gh, number


def answered_by(gh: GitHubSandbox, comment: dict[str, object]) -> list[str]:
    return [login for login in ("livereview", GLOBEX_BOT)
            for c in gh.github.comments_by(login)
            if replied_to(str(c["body"])) == f"issuecomment-{comment['id']}"]


def test_each_organisations_mention_is_answered_under_its_own_login(
        two_orgs: tuple[GitHubSandbox, int]) -> None:
    gh, number = two_orgs
    acme = gh.comment("@livereview is this lock needed?")
    globex = gh.github.add_issue_comment(GLOBEX, number, author="alice",
                                         body="@livereview why mesh?")
    assert gh.once() == 0
    assert answered_by(gh, acme) == ["livereview"]
    assert answered_by(gh, globex) == [GLOBEX_BOT]


def test_what_the_other_login_posted_is_never_answered(
        two_orgs: tuple[GitHubSandbox, int]) -> None:
    gh, number = two_orgs
    theirs = gh.comment("@livereview answered in globex", author=GLOBEX_BOT)
    mine = gh.github.add_issue_comment(GLOBEX, number, author="livereview",
                                       body="@livereview answered in acme")
    assert gh.once() == 0
    assert answered_by(gh, theirs) == [] and answered_by(gh, mine) == []
