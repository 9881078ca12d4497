"""The operator's console (DESIGN §11) over a sandbox GitLab polled by `livereview once`: the
health verdict per host, pending work with its last error, recent answers with their
latencies, an MR's conversation, where a lesson came from and who vetoed it, its export,
and the configuration — never a secret, in any page."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from livereview.cli.commands import parser
from livereview.metrics import Metrics
from livereview.sandbox.gitlab.model import JSON
from livereview.sandbox.llm_server import LLMFault
from livereview.settings import load
from livereview.tools.lessons_queue import LessonQueue, NoLessonStore
from livereview.web.app import create_app
from livereview.web.command import plan, secrets_of
from livereview.web.guard import Access
from livereview.web.site import Site
from tests.e2e.conftest import PROJECT, TOKEN, Sandbox
from tests.e2e.test_lessons import conceded as conceded  # the lesson set-up (a fixture)

BASE = "http://127.0.0.1:8470"
PAGES = ("/health", "/pending", "/recent", "/lessons", "/lessons/export", "/config", "/")


@contextmanager
def console(sandbox: Sandbox) -> Iterator[TestClient]:
    """The console as `livereview web --config` serves it (web/command.py's plan)."""
    chosen = plan(parser().parse_args(["--config", str(sandbox.config), "web"]))
    assert chosen.answering.settings is not None
    try:
        queue: LessonQueue | None = LessonQueue.open(chosen.answering.settings.daemon)
    except NoLessonStore:  # as `livereview web` does: no lessons room before a first poll
        queue = None
    site = Site([], chosen.answering, queue, chosen.answering.settings,
                tuple(secrets_of(chosen)))
    with TestClient(create_app(site, Access()), base_url=BASE) as client:
        yield client


def mr_page(sandbox: Sandbox) -> str:
    return "/conversation?mr=" + quote(f"gl:{PROJECT}!{sandbox.iid}", safe="")


def test_the_health_page_shows_each_hosts_last_successful_poll(sandbox: Sandbox) -> None:
    with console(sandbox) as web:  # nothing polled yet: the database does not exist
        page = web.get("/health").text
    assert 'id="verdict">unhealthy' in page and "no successful poll yet" in page
    assert sandbox.once() == 0
    with console(sandbox) as web:
        page = web.get("/health").text
    assert 'id="verdict">healthy' in page and "last-poll" in page
    assert "no successful poll yet" not in page and "s ago)" in page


def test_a_failed_job_is_pending_with_its_error_and_links_its_conversation(
        sandbox: Sandbox) -> None:
    sandbox.note("@livereview is this lock needed?")
    sandbox.config.write_text(sandbox.config.read_text().replace(
        "[daemon]", "[daemon]\nmax_attempts = 1"))
    sandbox.llm.llm.faults.extend(LLMFault(status=500) for _ in range(3))
    assert sandbox.once() == 0
    with console(sandbox) as web:
        page = web.get("/pending").text
    assert "state-failed" in page and "HTTP 500" in page and "mention" in page
    assert f'href="{mr_page(sandbox).replace("&", "&amp;")}"' in page


def test_recent_answers_show_time_to_ack_and_to_reply(sandbox: Sandbox) -> None:
    sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    with console(sandbox) as web:
        page = web.get("/recent").text
    assert 'class="answer"' in page and f"gl:{PROJECT}!{sandbox.iid}" in page
    to_ack = page.split('class="to-ack">')[1].split("<")[0]
    to_reply = page.split('class="to-reply">')[1].split("<")[0]
    assert to_ack != "—" and to_reply != "—"


def test_the_conversation_page_shows_threads_actors_events_and_jobs(sandbox: Sandbox) -> None:
    note = sandbox.note('@livereview is this <img src=x onerror="alert(1)"> lock needed?',
                        position={"new_path": "src/cache.py", "new_line": 9})
    assert sandbox.once() == 0
    assert sandbox.once() == 0  # sees its own reply
    with console(sandbox) as web:
        page = web.get(mr_page(sandbox)).text
        unknown = web.get("/conversation?mr=" + quote(f"gl:{PROJECT}!999", safe=""))
    assert "Guard the cache with a lock" in page and "src/cache.py:9" in page
    assert f"#{note['id']}" in page and "actor-human" in page and "actor-bot" in page
    assert "comment_added" in page and "state-posted" in page
    assert "eyes @livereview (per its reply job)" in page
    assert "<img src=x" not in page and "&lt;img src=x" in page
    assert unknown.status_code == 404 and "not in the store yet" in unknown.text


def test_a_lesson_shows_its_source_thread_its_vetoes_and_exports(sandbox: Sandbox,
                                                                 conceded: JSON) -> None:
    concession = conceded
    sandbox.gitlab.add_user("carol", "Carol")
    sandbox.gitlab.award(PROJECT, sandbox.iid, int(str(concession["id"])), user="carol",
                         name="thumbsdown")
    assert sandbox.once() == 0
    with console(sandbox) as web:
        page = web.get("/lessons").text
        export = web.get("/lessons/export")
    assert "Locks around single dict reads" in page
    assert "dict.get is atomic in CPython" in page  # the person's argument, quoted
    assert f"gl:{PROJECT}!{sandbox.iid}" in page and "👎 @carol" in page
    assert export.headers["content-disposition"] == 'attachment; filename="lessons.json"'
    [lesson] = json.loads(export.text)["lessons"]
    assert lesson["key"] == "Locks around single dict reads"


def test_the_configuration_names_where_the_token_lives_never_the_token(
        sandbox: Sandbox) -> None:
    with console(sandbox) as web:
        page = web.get("/config").text
    assert "hosts[0].token_env" in page and "LIVEREVIEW_E2E_TOKEN" in page
    assert "daemon.poll_interval_seconds" in page
    assert TOKEN not in page and "hosts[0].token<" not in page


@pytest.mark.parametrize("where", ["comment", "error"])
def test_no_console_page_ever_shows_a_configured_secret(sandbox: Sandbox, where: str) -> None:
    if where == "comment":  # hostile text quoting the token, shown by the conversation page
        sandbox.note(f"@livereview why does https://gl.example/api?private_token={TOKEN} fail?")
    else:  # an endpoint's error echoing it (a proxy quoting a URL): the job's last error
        sandbox.note("@livereview is this lock needed?")
        sandbox.config.write_text(sandbox.config.read_text().replace(
            "[daemon]", "[daemon]\nmax_attempts = 1"))
        sandbox.llm.llm.faults.extend(LLMFault(status=500, message=f"bad upstream "
                                               f"/api?private_token={TOKEN}") for _ in range(3))
    assert sandbox.once() == 0
    with console(sandbox) as web:
        bodies = {path: web.get(path).text for path in (*PAGES, mr_page(sandbox))}
    assert all(TOKEN not in body for body in bodies.values())
    if where == "comment":
        assert "private_token=***" in bodies[mr_page(sandbox)]
    else:
        assert "HTTP 500" in bodies["/pending"] and "private_token=***" in bodies["/pending"]


def test_the_health_page_shows_the_daemons_rate_limit_state_when_run_serves_it(
        sandbox: Sandbox) -> None:
    assert sandbox.once() == 0
    settings = load(sandbox.config, secrets=True)
    metrics = Metrics()
    metrics.rate_limit_remaining.labels("gitlab").set(17)
    metrics.rate_limited.labels("gitlab").inc(2)
    with TestClient(create_app(Site([], None, None, settings, metrics=metrics), Access()),
                    base_url=BASE) as web:
        assert "17 requests left, 2 throttled" in web.get("/health").text
    with console(sandbox) as web:  # `livereview web`: another process, no daemon counters
        assert "shown when <code>run</code> serves the console" in web.get("/health").text


def test_console_pages_need_a_config(sandbox: Sandbox) -> None:
    with TestClient(create_app(Site([]), Access()), base_url=BASE) as web:
        page = web.get("/health")
    assert page.status_code == 404 and "--config" in page.text


def test_the_conversation_page_says_commits_not_read_rather_than_none(sandbox: Sandbox) -> None:
    """An MR first read with nothing asked of the bot is stored without its commits
    (sync/commits.py): the page must not claim it has none."""
    sandbox.note("looks fine")
    assert sandbox.once() == 0
    with console(sandbox) as web:
        page = web.get(mr_page(sandbox)).text
    assert "Not read yet" in page and "No commit listed" not in page
