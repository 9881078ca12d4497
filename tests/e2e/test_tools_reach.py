"""`livereview mr …` and `livereview mcp` reach only the repos the operator chose: the
host's watched [[repos]] and what its `agent_repos` patterns match, however the MR is spelt
— web URL or HOST:REPO!IID, other case, trailing slashes, `..`, `%2F`, a bare project id.
Anything else is one line naming agent_repos (exit 2; a tool error over MCP), and no
request reaches the host for it: the token (which can read and approve the other project
on this fake GitLab) is never used there."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any
from urllib.parse import unquote

import pytest
from mcp import Client

from livereview.cli.commands import main
from tests.e2e.conftest import FILES, GITHUB_FILES, GITHUB_REPO, PROJECT, GitHubSandbox, Sandbox
from tests.e2e.test_mcp_stdio import call, server
from tests.e2e.test_tools_daemon import enable_writes

SECRET = "acme/secret"
OPERATIONS = [
    ["comments"], ["diffstat"], ["diff"], ["file", "src/cache.py"],
    ["reply", "1", "--body", "hi"], ["comment", "--body", "hi"], ["approve"], ["unapprove"],
    ["request-changes", "--body", "no"],
]


def secret_mr(sandbox: Sandbox) -> int:
    iid = sandbox.gitlab.add_mr(SECRET, title="Rotate the keys", author="bob", files=FILES)
    sandbox.gitlab.add_note(SECRET, iid, author="alice", body="@livereview approve this?")
    return iid


def set_agent_repos(sandbox: Sandbox, patterns: list[str]) -> None:
    text = re.sub(r"\nagent_repos = .*", "", sandbox.config.read_text(encoding="utf-8"))
    listed = ", ".join(f'"{p}"' for p in patterns)
    sandbox.config.write_text(text.replace('token_env = "LIVEREVIEW_E2E_TOKEN"',
                                           'token_env = "LIVEREVIEW_E2E_TOKEN"\n'
                                           f"agent_repos = [{listed}]"), encoding="utf-8")


def secret_requests(sandbox: Sandbox) -> list[str]:
    project_id = str(sandbox.gitlab.find_project(SECRET).id)
    return [path for _, path, _ in sandbox.gitlab.requests
            if SECRET in unquote(path).lower() or f"/projects/{project_id}/" in path]


def run(sandbox: Sandbox, *args: str) -> int:
    return main(["--config", str(sandbox.config), "mr", *args])


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda o: o[0])
def test_every_operation_on_an_unwatched_repo_is_refused_before_any_request(
        sandbox: Sandbox, operation: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    enable_writes(sandbox)
    iid = secret_mr(sandbox)
    assert run(sandbox, operation[0], f"gl:{SECRET}!{iid}", *operation[1:]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1, err
    assert "agent_repos" in err and "'acme/secret'" in err and "Traceback" not in err
    assert secret_requests(sandbox) == []
    assert sandbox.gitlab.approvers(SECRET, iid) == []
    assert sandbox.bot_notes() == []


@pytest.mark.parametrize("spelling", [
    "{url}/acme/secret/-/merge_requests/{iid}",
    "{url}/ACME/Secret/-/merge_requests/{iid}/diffs#note_1",
    "{url}/acme%2Fsecret/-/merge_requests/{iid}",
    "{url}/acme/widgets/../secret/-/merge_requests/{iid}",
    "gl:acme/secret/!{iid}",
    "gl:/acme/secret!{iid}",
    "gl:ACME/SECRET!{iid}",
    "gl:acme%2Fsecret!{iid}",
    "gl:acme%252Fsecret!{iid}",
    "gl:acme/widgets/../secret!{iid}",
    "gl:acme/./secret!{iid}",
    "gl:acme//secret!{iid}",
    "gl:{project_id}!{iid}",  # GitLab's API takes a project's id for its path
    "gl:acme/ſecret!{iid}",  # long s: Unicode case folding would make it an s
])
def test_no_spelling_of_an_unwatched_repo_reaches_it(
        sandbox: Sandbox, spelling: str, capsys: pytest.CaptureFixture[str]) -> None:
    enable_writes(sandbox)
    iid = secret_mr(sandbox)
    text = spelling.format(url=sandbox.gitlab_server.url, iid=iid,
                           project_id=sandbox.gitlab.find_project(SECRET).id)
    assert run(sandbox, "approve", text) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert secret_requests(sandbox) == []
    assert sandbox.gitlab.approvers(SECRET, iid) == []


@pytest.mark.parametrize("spelling", [
    "gl:ACME/Widgets!{iid}", "gl:acme/widgets/!{iid}", "gl:acme%2Fwidgets!{iid}",
    "{url}/Acme/Widgets/-/merge_requests/{iid}",
])
def test_a_watched_repo_in_another_spelling_is_the_watched_repo(
        sandbox: Sandbox, spelling: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = spelling.format(url=sandbox.gitlab_server.url, iid=sandbox.iid)
    assert run(sandbox, "comments", text, "--json") == 0
    assert f'"mr": "gl:{PROJECT}!{sandbox.iid}"' in capsys.readouterr().out


def test_agent_repos_widens_the_reach_to_the_repos_its_patterns_match(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    enable_writes(sandbox)
    set_agent_repos(sandbox, ["acme/*"])
    iid = secret_mr(sandbox)
    deeper = sandbox.gitlab.add_mr("acme/sub/app", title="Deeper", author="bob", files=FILES)
    assert run(sandbox, "approve", f"gl:ACME/Secret!{iid}") == 0
    assert sandbox.gitlab.approvers(SECRET, iid) == ["livereview"]
    capsys.readouterr()
    assert run(sandbox, "comments", f"gl:acme/sub/app!{deeper}") == 2  # * stays in a segment
    assert "agent_repos" in capsys.readouterr().err

    set_agent_repos(sandbox, ["acme/**"])
    assert run(sandbox, "comments", f"gl:acme/sub/app!{deeper}") == 0


@pytest.mark.parametrize(("pattern", "words"), [
    ("acme/[ab]*", "character classes"),
    ("acme/../*", "no . or .. segments"),
    ("acme/**x", "** stands for whole segments"),
    ("", "expected a repo path pattern"),
])
def test_a_wrong_agent_repos_pattern_is_a_config_error_naming_it(
        sandbox: Sandbox, pattern: str, words: str, capsys: pytest.CaptureFixture[str]) -> None:
    set_agent_repos(sandbox, ["team/app", pattern])
    assert run(sandbox, "comments", f"gl:{PROJECT}!{sandbox.iid}") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "hosts[0].agent_repos" in err and words in err, err


def test_the_mcp_tools_refuse_an_unwatched_repo_with_a_tool_error(sandbox: Sandbox) -> None:
    enable_writes(sandbox)
    iid = secret_mr(sandbox)
    url = f"{sandbox.gitlab_server.url}/Acme/Secret/-/merge_requests/{iid}"
    calls: list[tuple[str, dict[str, Any]]] = [
        ("comments", {}), ("diffstat", {}), ("diff", {}), ("file", {"path": "src/cache.py"}),
        ("reply", {"comment_id": "1", "body": "hi"}), ("comment", {"body": "hi"}),
        ("approve", {}), ("unapprove", {}), ("request_changes", {"body": "no"})]

    async def session() -> None:
        async with Client(server(sandbox)) as client:
            for tool, arguments in calls:
                for mr in (f"gl:{SECRET}!{iid}", url):
                    error, text = await call(client, tool, mr=mr, **arguments)
                    assert error and "agent_repos" in text and "\n" not in text, (tool, text)
            error, found = await call(client, "comments", mr=f"gl:ACME/widgets!{sandbox.iid}")
            assert not error and found["mr"] == f"gl:{PROJECT}!{sandbox.iid}"

    asyncio.run(asyncio.wait_for(session(), timeout=90))
    assert secret_requests(sandbox) == []
    assert sandbox.gitlab.approvers(SECRET, iid) == [] and sandbox.bot_notes() == []



def test_on_github_too_the_reach_is_the_watched_repo_in_any_case(
        gh: GitHubSandbox, capsys: pytest.CaptureFixture[str]) -> None:
    """GitHub resolves owner and repo names whatever their case; the reach does too."""
    text = gh.config.read_text(encoding="utf-8")
    gh.config.write_text(text.replace('token_env = "LIVEREVIEW_E2E_GITHUB_TOKEN"',
                                      'token_env = "LIVEREVIEW_E2E_GITHUB_TOKEN"\n'
                                      "agent_writes = true"), encoding="utf-8")
    secret = gh.github.add_pr("acme/secret", title="Keys", author="bob", files=GITHUB_FILES)
    web = gh.server.enterprise_url.removesuffix("/api/v3")
    for mr in (f"gh:acme/secret!{secret}", f"{web}/ACME/Secret/pull/{secret}",
               f"gh:acme%2Fsecret!{secret}", f"gh:acme/widgets/../secret!{secret}"):
        assert main(["--config", str(gh.config), "mr", "approve", mr]) == 2
        assert capsys.readouterr().err.count("\n") == 1
    assert not [p for _, p, _ in gh.github.requests if "secret" in unquote(p).lower()]
    assert main(["--config", str(gh.config), "mr", "comments", f"gh:ACME/Widgets!{gh.number}",
                 "--json"]) == 0
    assert f'"mr": "gh:{GITHUB_REPO}!{gh.number}"' in capsys.readouterr().out


# GitLab before 16.7 answers a moved project's former path for the project (redirect routes,
# lib/api/helpers.rb `find_project`); 16.7 on answers GET with 301 to the URL by project id
# and every other method with 405 (merge request !137578, `find_project!`).
GITLAB_MOVES = pytest.mark.parametrize("redirects", [False, True],
                                       ids=["gitlab<16.7", "gitlab>=16.7"])


@GITLAB_MOVES
@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda o: o[0])
def test_a_project_moved_out_of_the_reach_is_refused_by_its_old_path_with_no_write(
        sandbox: Sandbox, operation: list[str], redirects: bool,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`acme/*` must not reach what was acme/tools once it is vault/tools."""
    sandbox.gitlab.redirects_moved_projects = redirects
    enable_writes(sandbox)
    set_agent_repos(sandbox, ["acme/*"])
    iid = sandbox.gitlab.add_mr("acme/tools", title="Keys", author="bob", files=FILES)
    sandbox.gitlab.add_note("acme/tools", iid, author="alice", body="@livereview approve?")
    sandbox.gitlab.move_project("acme/tools", "vault/tools")
    assert sandbox.gitlab.find_project("acme/tools").path == "vault/tools"  # as GitLab does
    before = len(sandbox.gitlab.requests)
    assert run(sandbox, operation[0], f"gl:acme/tools!{iid}", *operation[1:]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert "agent_repos" in err and "'vault/tools'" in err and "moved" in err, err
    lookups = ["GET", "GET"] if redirects else ["GET"]  # by path, then by the id it gave
    assert [m for m, _, _ in sandbox.gitlab.requests[before:]] == lookups  # no write
    assert sandbox.gitlab.approvers("vault/tools", iid) == [] and sandbox.bot_notes() == []


@GITLAB_MOVES
def test_a_project_moved_within_the_reach_is_still_reached_by_its_old_path(
        sandbox: Sandbox, redirects: bool, capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.gitlab.redirects_moved_projects = redirects
    enable_writes(sandbox)
    set_agent_repos(sandbox, ["acme/*"])
    iid = sandbox.gitlab.add_mr("acme/tools", title="Keys", author="bob", files=FILES)
    sandbox.gitlab.move_project("acme/tools", "acme/toolbox")
    assert run(sandbox, "approve", f"gl:acme/tools!{iid}") == 0, capsys.readouterr().err
    assert sandbox.gitlab.approvers("acme/toolbox", iid) == ["livereview"]
    assert run(sandbox, "comments", f"gl:acme/tools!{iid}", "--json") == 0
    assert f'"mr": "gl:acme/toolbox!{iid}"' in capsys.readouterr().out  # where it is now


def test_the_mcp_tools_refuse_a_project_moved_out_of_the_reach(sandbox: Sandbox) -> None:
    enable_writes(sandbox)
    set_agent_repos(sandbox, ["acme/*"])
    iid = sandbox.gitlab.add_mr("acme/tools", title="Keys", author="bob", files=FILES)
    sandbox.gitlab.move_project("acme/tools", "vault/tools")

    async def session() -> None:
        async with Client(server(sandbox)) as client:
            error, text = await call(client, "approve", mr=f"gl:acme/tools!{iid}")
            assert error and "agent_repos" in text and "vault/tools" in text, text

    asyncio.run(asyncio.wait_for(session(), timeout=90))
    assert sandbox.gitlab.approvers("vault/tools", iid) == []


def test_a_binary_file_gives_its_metadata_instead_of_a_refusal(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    iid = sandbox.gitlab.add_mr(PROJECT, title="Logo", author="bob",
                                files={"img/logo.png": ("", "\x89PNG\r\n\x1a\n\x00\x00")})
    assert run(sandbox, "file", f"gl:{PROJECT}!{iid}", "img/logo.png", "--json") == 0
    said = json.loads(capsys.readouterr().out)
    assert (said["type"], said["encoding"], said["mime"], said["content"], said["size"]) == (
        "binary", "binary", "image/png", "", None)
    assert run(sandbox, "file", f"gl:{PROJECT}!{iid}", "img/logo.png") == 0
    out, err = capsys.readouterr()
    assert out == "" and "a binary file, image/png" in err and err.count("\n") == 1
