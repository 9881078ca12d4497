"""The operator's commands: init, check, pending, bad config — one clear line, right exit code."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.settings import load
from tests.e2e.conftest import GITHUB_REPO, TOKEN, GitHubSandbox, Sandbox


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", *args], capture_output=True, text=True,
        env={**os.environ, **(env or {})}, timeout=300, check=False)


def test_init_writes_a_config_that_loads_once_its_token_is_set(tmp_path: Path) -> None:
    target = tmp_path / "livereview.toml"
    assert main(["init", str(target)]) == 0
    settings = load(target, {"LIVEREVIEW_GITLAB_TOKEN": "x" * 20, "OPENAI_API_KEY": "k"})
    assert settings.hosts[0].type == "gitlab"
    assert main(["init", str(target)]) == 2  # never overwrites silently
    shipped = Path(__file__).parents[2] / "livereview.toml.example"
    assert shipped.read_text(encoding="utf-8") == target.read_text(encoding="utf-8")


def test_check_prints_identity_and_repos(sandbox: Sandbox,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(sandbox.config), "check"]) == 0
    out = capsys.readouterr().out
    assert "@livereview" in out and "acme/widgets" in out and "FAIL" not in out
    assert re.search(r"listing +ok +instance-wide: one request per cycle for all repos", out)


def test_check_names_a_missing_repo_and_exits_1(sandbox: Sandbox,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.config.write_text(sandbox.config.read_text().replace("acme/widgets", "acme/nope"))
    assert main(["--config", str(sandbox.config), "check"]) == 1
    assert "acme/nope  FAIL  not found (404)" in capsys.readouterr().out


def test_check_explains_a_forbidden_repo_in_its_hosts_terms(
        gh: GitHubSandbox, capsys: pytest.CaptureFixture[str]) -> None:
    """It said "needs at least Reporter access" on every host: a GitLab role on GitHub."""
    gh.github.inject_fault("GET", rf"/repos/{GITHUB_REPO}$", status=403,
                           body='{"message": "Resource not accessible by integration"}')
    assert main(["--config", str(gh.config), "check"]) == 1
    out = capsys.readouterr().out
    assert f"{GITHUB_REPO}  FAIL  forbidden (403): the bot user needs read access to the " \
           "repository (a fine-grained token must list it)" in out
    assert "Reporter" not in out


def test_check_with_a_rejected_token_exits_1_without_showing_it(sandbox: Sandbox) -> None:
    bad = "glpat-WRONG-token-0000"
    result = run_cli("--config", str(sandbox.config), "check",
                     env={"LIVEREVIEW_E2E_TOKEN": bad})
    assert result.returncode == 1
    assert "token rejected (401)" in result.stdout
    assert bad not in result.stdout + result.stderr


def test_check_with_an_unreachable_host_exits_1_naming_the_cause(sandbox: Sandbox) -> None:
    address = sandbox.gitlab_server.url.removeprefix("http://")
    sandbox.gitlab_server.stop()
    result = run_cli("--config", str(sandbox.config), "check", env={"LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert result.returncode == 1
    assert re.search(rf"identity +FAIL +unreachable: {address} refused the connection "
                     r"\(nothing listens there\)", result.stdout)
    assert "Traceback" not in result.stderr


def test_once_ends_with_one_line_naming_the_failure(sandbox: Sandbox) -> None:
    """`once` used to exit 1 after JSON log lines only: a cron job's mail said nothing a
    person could read at a glance."""
    assert run_cli("--config", str(sandbox.config), "once",
                   env={"LIVEREVIEW_E2E_TOKEN": TOKEN}).returncode == 0
    sandbox.gitlab_server.stop()
    result = run_cli("--config", str(sandbox.config), "once",
                     env={"LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "livereview: once: polling failed on gl (the log lines above say why)")
    assert "Traceback" not in result.stderr


def test_check_names_an_unresolvable_host_and_an_unreachable_model(sandbox: Sandbox) -> None:
    sandbox.config.write_text(sandbox.config.read_text().replace(
        sandbox.gitlab_server.url, "http://gitlab.invalid"))
    llm = sandbox.llm.url
    sandbox.llm.stop()
    result = run_cli("--config", str(sandbox.config), "check", env={"LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert result.returncode == 1
    assert re.search(r"identity +FAIL +unreachable: cannot resolve gitlab.invalid: ",
                     result.stdout)
    assert re.search(rf"ai +endpoint +FAIL +LLM endpoint {llm} unreachable: connection "
                     "refused", result.stdout)


@pytest.mark.parametrize(("change", "message"), [
    (("poll_interval_seconds = 5", "poll_interval_seconds = 'often'"),
     "daemon.poll_interval_seconds: expected float, got 'often'"),
    (('type = "gitlab"', 'type = "gitlub"'), "hosts[0].type: expected one of"),
    (("[[repos]]", "[[repos]]\nbranch = 'main'"), "repos[0].branch: unknown key"),
    (('\nurl = "http', '\nurl = "ftp'), "hosts[0].url: expected an http(s) URL"),
    (('base_url = "http', 'base_url = "ftp'), "ai.base_url: expected an http(s) URL"),
    (("[daemon]", "[daemon]\nwatermark_overlap_seconds = 10"),
     "daemon.watermark_overlap_seconds: must be >= 60"),
    (("token_env", "tokenenv"), "hosts[0].tokenenv: unknown key"),
])
def test_bad_config_is_one_line_naming_the_key_and_exit_2(
        sandbox: Sandbox, change: tuple[str, str], message: str) -> None:
    sandbox.config.write_text(sandbox.config.read_text().replace(*change, 1))
    result = run_cli("--config", str(sandbox.config), "check", env={"LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_token_variable_is_named(sandbox: Sandbox) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LIVEREVIEW_E2E_TOKEN"}
    result = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "livereview", "--config", str(sandbox.config), "once"],
        capture_output=True, text=True, env=env, timeout=300, check=False)
    assert result.returncode == 2
    assert result.stderr.strip() == ("livereview: config error: hosts[0].token_env: environment "
                                     "variable LIVEREVIEW_E2E_TOKEN is not set")


def test_missing_config_file_says_how_to_make_one(tmp_path: Path) -> None:
    result = run_cli("--config", str(tmp_path / "none.toml"), "run")
    assert result.returncode == 2
    assert "livereview init" in result.stderr


def test_pending_lists_failed_jobs_with_their_reason(sandbox: Sandbox,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.note("@livereview is this lock needed?")
    sandbox.config.write_text(sandbox.config.read_text().replace(
        "[daemon]", "[daemon]\nmax_attempts = 1"))
    from livereview.sandbox.llm_server import LLMFault
    sandbox.llm.llm.faults.extend(LLMFault(status=500) for _ in range(3))
    assert sandbox.once() == 0
    capsys.readouterr()
    assert main(["--config", str(sandbox.config), "pending"]) == 0
    out = capsys.readouterr().out
    assert "failed" in out and "acme/widgets" in out and "HTTP 500" in out
    assert sandbox.bot_notes() == []  # never a half answer


def test_conversation_shows_threads_actors_events_and_jobs(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    note = sandbox.note("@livereview is this lock needed?",
                        position={"new_path": "src/cache.py", "new_line": 9})
    assert sandbox.once() == 0
    assert sandbox.once() == 0  # sees its own reply
    url = f"{sandbox.gitlab_server.url}/acme/widgets/-/merge_requests/{sandbox.iid}"
    capsys.readouterr()
    assert main(["--config", str(sandbox.config), "conversation", url]) == 0
    tree = capsys.readouterr().out
    assert "on src/cache.py:9" in tree
    assert f"#{note['id']} @alice (human)" in tree
    assert "@livereview (bot (self))" in tree
    assert "comment_added" in tree
    assert f"posted    #{note['id']} (mention)" in tree
    # GitLab's discussions carry no award emoji: the bot's 👀 comes from its reply job.
    assert f"#{note['id']} @alice (human) “@livereview is this lock needed?” [eyes " \
           "@livereview, per its reply job]" in tree
    assert main(["--config", str(sandbox.config), "conversation", "--json", url]) == 0
    graph = json.loads(capsys.readouterr().out)
    [job] = graph["jobs"]
    assert job["state"] == "posted"
    question, answer = graph["threads"][-1]["messages"]
    assert [question["actor"], answer["actor"]] == ["human", "bot (self)"]
    assert question["reactions"] == [{"name": "eyes", "user": "livereview",
                                      "source": "reply job"}]
    assert answer["reactions"] == []
    [commit] = graph["commits"]  # with its whole message and its author
    assert commit["message"].startswith(commit["title"]) and commit["author"]


def test_conversation_of_an_unknown_url_is_a_clear_error(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(sandbox.config), "conversation",
                 "https://elsewhere.example/a/b/-/merge_requests/1"]) == 2
    assert "not a merge request of a configured host" in capsys.readouterr().err


def test_pending_is_per_repo_and_can_include_replied(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    note = sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    capsys.readouterr()
    assert main(["--config", str(sandbox.config), "pending"]) == 0
    assert capsys.readouterr().out.strip() == "nothing pending"
    assert main(["--config", str(sandbox.config), "pending", "--include-replied", "--json"]) == 0
    [item] = json.loads(capsys.readouterr().out)
    assert (item["state"], item["key"].endswith(f":{note['id']}")) == ("posted", True)
    sandbox.gitlab.add_project("acme/other")
    sandbox.config.write_text(sandbox.config.read_text() + '\n[[repos]]\nhost = "gl"\n'
                              'path = "acme/other"\n')
    assert main(["--config", str(sandbox.config), "pending", "--include-replied",
                 "--repo", "acme/other"]) == 0
    assert capsys.readouterr().out.strip() == "nothing pending"


def test_pending_for_a_repo_that_is_not_watched_says_so(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    assert sandbox.once() == 0
    capsys.readouterr()
    assert main(["--config", str(sandbox.config), "pending", "--repo", "acme/typo"]) == 2
    assert capsys.readouterr().err.strip() == ("livereview: pending --repo acme/typo: not a "
                                               "watched repo (the config watches acme/widgets)")


def test_once_profile_shows_where_the_cycle_time_went(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.note("@livereview is this lock needed?")
    assert main(["--config", str(sandbox.config), "once", "--profile"]) == 0
    out = capsys.readouterr().out
    assert "poll gl: " in out and "1 new jobs" in out
    assert "top 20 livereview functions by cumulative time:" in out
    # The poll cycle is itemised: its parts live in sync/ (poller.py, mr_syncs.py, read.py);
    # which of them make the top 20 varies with load.
    assert re.search(r"livereview/sync/\w+\.py:\d+", out)


def _once_on_a_terminal(sandbox: Sandbox) -> str:
    """Run `once` with stderr on a pseudo-terminal; return what the terminal showed."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(  # noqa: S603 - our own CLI
        [sys.executable, "-m", "livereview", "--config", str(sandbox.config), "once"],
        stdout=subprocess.DEVNULL, stderr=terminal,  # a person's terminal, not CI's
        env={**{k: v for k, v in os.environ.items() if k != "CI"},
             "LIVEREVIEW_E2E_TOKEN": TOKEN})
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    assert process.wait(timeout=300) == 0
    os.close(controller)
    return shown.decode(errors="replace")


def test_once_shows_progress_on_a_terminal_and_not_in_json_mode(sandbox: Sandbox) -> None:
    for i in range(11):
        sandbox.gitlab.add_mr("acme/widgets", title=f"change {i}", author="bob",
                              files={f"f{i}.py": ("a\n", "b\n")})
    shown = _once_on_a_terminal(sandbox)
    assert "gl: merge requests" in shown and "12/12" in shown
    sandbox.config.write_text(sandbox.config.read_text().replace(
        "[daemon]", '[daemon]\nlog_format = "json"'))
    for i in range(11):
        sandbox.gitlab.add_mr("acme/widgets", title=f"more {i}", author="bob")
    assert "merge requests" not in _once_on_a_terminal(sandbox)


def test_conversation_takes_github_pull_request_urls(tmp_path: Path) -> None:
    from livereview.cli.conversation import parse_url
    from livereview.core.model import MRKey
    from livereview.settings import parse

    settings = parse({
        "ai": {"api_key_env": ""},
        "hosts": [{"name": "gh", "type": "github", "token_env": "T"},
                  {"name": "ghe", "type": "github", "url": "https://ghe.example/api/v3",
                   "token_env": "T"}],
        "repos": [{"host": "gh", "path": "acme/widgets"}]}, {"T": "x" * 20})
    assert parse_url(settings, "https://github.com/acme/widgets/pull/12") == MRKey(
        "gh", "acme/widgets", 12)
    assert parse_url(settings, "https://ghe.example/acme/widgets/pull/3#discussion_r1") == \
        MRKey("ghe", "acme/widgets", 3)


def test_review_and_conversation_take_every_hosts_mr_references(tmp_path: Path) -> None:
    """They had their own URL reading, which knew GitLab and GitHub only: `livereview
    review <a Bitbucket pull request>` was refused as no MR of a configured host."""
    from livereview.cli.conversation import parse_url
    from livereview.core.model import MRKey
    from livereview.settings import parse

    settings = parse({
        "ai": {"api_key_env": ""},
        "hosts": [{"name": "bbc", "type": "bitbucket-cloud", "token_env": "T",
                   "username": "livereview-bot"},
                  {"name": "bbs", "type": "bitbucket-server", "url": "https://bb.example",
                   "token_env": "T"}],
        "repos": [{"host": "bbc", "path": "acme/widgets"}]}, {"T": "x" * 20})
    assert parse_url(settings, "https://bitbucket.org/acme/widgets/pull-requests/4") == MRKey(
        "bbc", "acme/widgets", 4)
    assert parse_url(settings, "https://bb.example/projects/ACME/repos/widgets/"
                               "pull-requests/9/overview") == MRKey("bbs", "ACME/widgets", 9)
    assert parse_url(settings, "bbs:ACME/widgets!9") == MRKey("bbs", "ACME/widgets", 9)


def test_commands_other_than_mcp_do_not_load_the_mcp_sdk() -> None:
    """The SDK added a third of a second to every command (and broke the CLI fuzz module's
    time budget) until it was loaded only by `livereview mcp`; a second import of it in
    the local-review tools brought it back once."""
    probe = ("import sys; from livereview import cli; "
             "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,  # noqa: S603
                            timeout=300, check=True)
    assert result.stdout.strip() == "[]"
