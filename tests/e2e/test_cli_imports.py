"""The commands an agent or a health check runs in a loop load only what they use
(docs/getting-started.md, "A CLI for loops"): not the model's SDK (jobs/llm.py only), not
the MCP SDK (`mcp` only), not the web stack (`web` only), not the sandbox (`demo` only), and
not rich, which structlog would take for tracebacks it never formats.

Pinned by the modules a fresh interpreter holds after `main(argv)`, never by timing:
bench/fig_startup.py measures the time and memory this buys.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import cast

import pytest

from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.store.faults import revisions
from tests.local_repo import review_repo

PROBE = """
import json, linecache, sys
from livereview.cli.commands import main
try:
    code = main(json.loads(sys.argv[1]))
except SystemExit as exc:
    code = exc.code
with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump({"code": code, "modules": sorted(sys.modules),
               "sources": sorted(name for name in linecache.cache if name.endswith(".py"))},
              out)
"""
# What no light command may load; a module counts with its submodules.
NEVER = ("openai", "mcp", "starlette", "uvicorn", "jinja2", "livereview.sandbox", "alembic",
         "livereview.web", "livereview.mcp", "livereview.app.daemon", "livereview.jobs.llm",
         "rich", "apscheduler")
# --version and --help read no config, no store: not even the database layer or pydantic.
NOTHING = (*NEVER, "sqlalchemy", "sqlmodel", "pydantic", "httpx2",
           "prometheus_client", "livereview.store", "livereview.settings")


def _config(tmp_path: Path, gitlab_url: str = "http://127.0.0.1:9") -> Path:
    config = tmp_path / "livereview.toml"
    config.write_text(  # no metrics port: two `run`s on two xdist workers would share it
        f'[daemon]\ndatabase_url = "sqlite:///{tmp_path / "state.db"}"\nmetrics_listen = ""\n\n'
        '[ai]\nbase_url = "http://127.0.0.1:9"\nmodel = "m"\napi_key_env = ""\n\n'
        f'[[hosts]]\nname = "gl"\ntype = "gitlab"\nurl = "{gitlab_url}"\n'
        'token_env = "LIVEREVIEW_E2E_TOKEN"\n\n[[repos]]\nhost = "gl"\npath = "acme/api"\n',
        encoding="utf-8")
    return config


def probed(argv: list[str], cwd: Path, tmp_path: Path) -> dict[str, object]:
    """What a fresh interpreter that ran `main(argv)` reports: its exit code, its modules
    and the source files it read (linecache: what `inspect.getsource` and tracebacks
    read). What it printed is left in `tmp_path / "stdout"`."""
    report = tmp_path / "modules.json"
    env = {**os.environ, "LIVEREVIEW_E2E_TOKEN": "t" * 20}
    env.pop("LIVEREVIEW_CONFIG", None)
    env.pop("OPENAI_API_KEY", None)
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv),  # noqa: S603
                           str(report)], cwd=cwd, env=env, check=True, capture_output=True,
                          timeout=600)
    (tmp_path / "stdout").write_bytes(done.stdout)
    found: dict[str, object] = json.loads(report.read_text(encoding="utf-8"))
    return found


def loaded(argv: list[str], cwd: Path, tmp_path: Path) -> tuple[object, list[str]]:
    """The exit code and the modules of a fresh interpreter that ran `main(argv)`."""
    found = probed(argv, cwd, tmp_path)
    return found["code"], cast("list[str]", found["modules"])


def _present(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted({n for n in names for m in modules if m == n or m.startswith(n + ".")})


@pytest.mark.parametrize(("argv", "forbidden"), [
    (["--version"], NOTHING), (["--help"], NOTHING), (["review", "--help"], NOTHING),
    (["lessons", "--help"], NOTHING), (["mr", "--help"], NEVER)])
def test_version_and_help_load_neither_the_store_nor_any_sdk(
        argv: list[str], forbidden: tuple[str, ...], tmp_path: Path) -> None:
    code, modules = loaded(argv, tmp_path, tmp_path)
    assert code == 0
    assert _present(modules, forbidden) == []


@pytest.mark.parametrize("argv", [["health"], ["pending"], ["pending", "--json"],
                                  ["lessons", "list"], ["mr", "comments", "gl:acme/api!1"]])
def test_store_reading_commands_load_no_sdk_web_stack_or_sandbox(
        argv: list[str], tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert main_ok(["--config", str(config), "db", "migrate", "--create",
                    "--url", f"sqlite:///{tmp_path / 'state.db'}"], tmp_path)
    code, modules = loaded(["--config", str(config), *argv], tmp_path, tmp_path)
    assert code in (0, 1)  # `health`: never polled; `mr comments`: the host is port 9
    assert "livereview.store.faults" in modules  # the probe sees what ran: these do read
    assert _present(modules, NEVER) == []


# What the store's plain read path (store/reads.py) keeps out of `health` and `pending` on
# a SQLite store: the ORM and the database layer under it; and, as they log nothing and
# await nothing, structlog (log_setup.py configures it when it is loaded) and asyncio.
NO_ORM = ("sqlalchemy", "sqlmodel", "livereview.store.tables", "livereview.store.db",
          "livereview.store.engine", "structlog", "asyncio")


@pytest.mark.parametrize("argv", [["health"], ["pending"], ["pending", "--json"],
                                  ["pending", "--include-replied"]])
def test_health_and_pending_read_a_sqlite_store_without_the_orm(
        argv: list[str], tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert main_ok(["--config", str(config), "db", "migrate", "--create",
                    "--url", f"sqlite:///{tmp_path / 'state.db'}"], tmp_path)
    code, modules = loaded(["--config", str(config), *argv], tmp_path, tmp_path)
    assert code == (1 if argv == ["health"] else 0)  # `health`: never polled
    assert "livereview.store.reads" in modules
    assert _present(modules, NO_ORM) == []


def test_reading_a_config_parses_no_source_file(tmp_path: Path) -> None:
    """The settings models' docstrings are the configuration reference's text
    (settings/reference.py reads them when generating it); loading a config must not parse
    the models' source to find them, as pydantic's `use_attribute_docstrings` does on every
    start."""
    config = _config(tmp_path)
    found = probed(["--config", str(config), "health"], tmp_path, tmp_path)
    assert found["code"] == 1  # never polled: the config was read, the store looked at
    assert "livereview.settings.models" in cast("list[str]", found["modules"])
    assert [s for s in cast("list[str]", found["sources"]) if "livereview" in s] == []


@pytest.mark.parametrize("verb", [["list"], ["list", "--json"], ["show", "1"],
                                  ["show", "1", "--json"]])
def test_reading_local_reviews_loads_no_model_sdk(verb: list[str], tmp_path: Path) -> None:
    repo = review_repo(tmp_path / "r")
    assert main_ok(["review", "request", "HEAD~1", "--title", "T"], repo.path)
    code, modules = loaded(["review", *verb], repo.path, tmp_path)
    assert code == 0
    assert _present(modules, NEVER) == []


def main_ok(argv: list[str], cwd: Path) -> bool:
    env = {k: v for k, v in os.environ.items()
           if k not in ("LIVEREVIEW_CONFIG", "OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL")}
    done = subprocess.run([sys.executable, "-m", "livereview", *argv],  # noqa: S603
                          cwd=cwd, env=env, capture_output=True, timeout=600, check=False)
    return done.returncode == 0


RUN_PROBE = """
import json, os, signal, sys
from livereview.cli.commands import main  # first, as `python -m livereview` imports it
from livereview.app.daemon import App

ticked = App.tick

async def tick_then_stop(self):
    await ticked(self)
    os.kill(os.getpid(), signal.SIGTERM)  # after the first poll: the daemon has done its work

App.tick = tick_then_stop
code = main(json.loads(sys.argv[1]))
with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""
# What `livereview run` never loads (bench figure 5 measures the memory this keeps out):
# the OpenAI SDK's types (jobs/chat.py speaks the protocol), the faces it does not serve,
# the fakes, alembic on a database that is current, rich / pygments, trio (asyncio only:
# cli/asyncio_only.py), and the packages of host types it does not watch.
RUN_NEVER = ("openai", "mcp", "starlette", "uvicorn", "jinja2", "livereview.sandbox",
             "alembic", "mako", "livereview.web", "livereview.mcp", "rich", "pygments", "trio",
             "livereview.hosts.github", "livereview.hosts.bitbucket_cloud",
             "livereview.hosts.bitbucket_server")  # the config has a GitLab host only


def test_run_loads_neither_the_model_sdk_nor_the_faces_nor_alembic_when_current(
        tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert main_ok(["--config", str(config), "db", "migrate", "--create",
                    "--url", f"sqlite:///{tmp_path / 'state.db'}"], tmp_path)
    report = tmp_path / "modules.json"
    env = {**os.environ, "LIVEREVIEW_E2E_TOKEN": "t" * 20}
    env.pop("LIVEREVIEW_CONFIG", None)
    subprocess.run([sys.executable, "-c", RUN_PROBE,  # noqa: S603
                    json.dumps(["--config", str(config), "run"]), str(report)],
                   cwd=tmp_path, env=env, check=True, capture_output=True, timeout=600)
    found = json.loads(report.read_text(encoding="utf-8"))
    assert found["code"] == 0  # SIGTERM: systemd's ordinary stop
    modules: list[str] = found["modules"]
    assert {"livereview.app.daemon", "livereview.jobs.chat", "apscheduler"} <= set(modules)
    assert _present(modules, RUN_NEVER) == []


def test_run_on_a_new_store_upgrades_it_in_a_child_and_never_loads_alembic(
        tmp_path: Path) -> None:
    """Alembic and an upgrade cost the process ~13 MiB of RSS for good (bench figure 5):
    the daemon's first start on a new database migrates it in a child process."""
    config = _config(tmp_path)
    report = tmp_path / "modules.json"
    env = {**os.environ, "LIVEREVIEW_E2E_TOKEN": "t" * 20}
    env.pop("LIVEREVIEW_CONFIG", None)
    subprocess.run([sys.executable, "-c", RUN_PROBE,  # noqa: S603
                    json.dumps(["--config", str(config), "run"]), str(report)],
                   cwd=tmp_path, env=env, check=True, capture_output=True, timeout=600)
    found = json.loads(report.read_text(encoding="utf-8"))
    assert found["code"] == 0
    assert _present(found["modules"], ("alembic", "mako")) == []
    with contextlib.closing(sqlite3.connect(tmp_path / "state.db")) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (revisions()[1],)]


def test_mr_comments_reads_the_replied_marks_of_a_current_sqlite_store_without_the_orm(
        tmp_path: Path) -> None:
    """Only the configured host type's adapter, and no ORM: the marks are a plain read (the
    host is port 9, refused, after the store was opened)."""
    config = _config(tmp_path)
    assert main_ok(["--config", str(config), "db", "migrate", "--create",
                    "--url", f"sqlite:///{tmp_path / 'state.db'}"], tmp_path)
    code, modules = loaded(["--config", str(config), "mr", "comments", "gl:acme/api!1"],
                           tmp_path, tmp_path)
    assert code == 1
    assert {"livereview.store.reads", "livereview.hosts.gitlab.adapter"} <= set(modules)
    assert _present(modules, ("sqlalchemy", "sqlmodel", "livereview.store.tables",
                              "livereview.hosts.github", "livereview.hosts.bitbucket_cloud",
                              "livereview.hosts.bitbucket_server")) == []


# `show` reads the code around each thread through the local host's git calls (asyncio).
LOCAL_PLAIN = ("sqlalchemy", "sqlmodel", "livereview.store.tables", "livereview.store.db",
               "livereview.store.engine", "structlog", "pydantic", "livereview.settings")


@pytest.mark.parametrize(("verb", "forbidden"), [
    (["list"], (*LOCAL_PLAIN, "asyncio")), (["list", "--json"], (*LOCAL_PLAIN, "asyncio")),
    (["show", "1"], LOCAL_PLAIN), (["show", "1", "--json"], LOCAL_PLAIN)])
def test_reading_local_reviews_reads_the_repository_store_without_the_orm(
        verb: list[str], forbidden: tuple[str, ...], tmp_path: Path) -> None:
    """No config, no settings, nothing logged: `review list|show` read `.livereview/` with
    sqlite3 (tools/local_list.py) once `review request` has created it."""
    repo = review_repo(tmp_path / "r")
    assert main_ok(["review", "request", "HEAD~1", "--title", "T"], repo.path)
    code, modules = loaded(["review", *verb], repo.path, tmp_path)
    assert code == 0
    assert "livereview.store.local_reads" in modules
    assert _present(modules, forbidden) == []


# What `mr comments` — the call an agent makes in a loop — does not load to read one MR's
# comments from a host that answers: the HTTP client without trio (cli/asyncio_only.py),
# no metrics (nothing exports them), no structlog while nothing is logged
# (log_setup.get_logger), no Markdown parser, no local host, none of the other operations'
# tools, and only the configured host type's adapter (bench figure 17 measures the memory);
# nor pydantic and the settings models, when the light reader can read the config
# (settings/light.py).
MODELS = ("pydantic", "pydantic_core", "livereview.settings.models",
          "livereview.settings.loading")
MR_COMMENTS_NEVER = (*NEVER, *MODELS, "trio", "prometheus_client", "livereview.metrics",
                     "structlog",
                     "markdown_it", "livereview.hosts.local", "livereview.tools.writing",
                     "livereview.tools.diffs", "livereview.tools.anchors",
                     "livereview.tools.show", "livereview.core.postable",
                     "livereview.hosts.github", "livereview.hosts.bitbucket_cloud",
                     "livereview.hosts.bitbucket_server", "sqlalchemy", "sqlmodel")


def _served_comments(tmp_path: Path, *extras: str) -> list[tuple[dict[str, object], object]]:
    """`mr comments --json` of one served MR, once per config (the base one with each of
    `extras` appended, each beside its own store): what the probe reports, and the document
    printed."""
    gitlab = FakeGitLab(token="t" * 20)  # what probed() gives the CLI
    gitlab.add_user("alice", "Alice")
    gitlab.add_project("acme/api")
    iid = gitlab.add_mr("acme/api", title="Guard the cache", author="bob",
                        files={"a.py": ("x = 1\n", "x = 2\n")})
    gitlab.add_note("acme/api", iid, author="alice", body="Is a lock needed for a read?")
    runs: list[tuple[dict[str, object], object]] = []
    with FakeGitLabServer(gitlab) as server:
        for index, extra in enumerate(extras or ("",)):
            where = tmp_path / str(index)
            where.mkdir()
            config = _config(where, server.url)
            config.write_text(config.read_text(encoding="utf-8") + extra, encoding="utf-8")
            assert main_ok(["--config", str(config), "db", "migrate", "--create",
                            "--url", f"sqlite:///{where / 'state.db'}"], where)
            found = probed(["--config", str(config), "mr", "comments", f"gl:acme/api!{iid}",
                            "--json"], where, where)
            assert found["code"] == 0
            runs.append((found, json.loads((where / "stdout").read_text(encoding="utf-8"))))
    return runs


def test_mr_comments_reads_a_served_mr_loading_only_the_one_shot_read(tmp_path: Path) -> None:
    [(found, shown)] = _served_comments(tmp_path)
    assert isinstance(shown, dict)
    assert [c["body"] for c in shown["comments"]] == ["Is a lock needed for a read?"]
    modules = cast("list[str]", found["modules"])
    assert {"livereview.tools.comments", "livereview.hosts.gitlab.adapter",
            "livereview.store.reads", "httpx2"} <= set(modules)
    assert _present(modules, MR_COMMENTS_NEVER) == []


def test_mr_comments_reads_a_config_the_light_reader_leaves_with_the_models_alike(
        tmp_path: Path) -> None:
    """A `[knowledge]` section is the models' to read: pydantic is loaded, and the comments
    printed are the same, byte for byte."""
    [(light, light_shown), (full, full_shown)] = _served_comments(
        tmp_path, "", '\n[knowledge]\nglobal = ["docs/adr.md"]\n')
    assert full_shown == light_shown
    assert set(MODELS) <= set(cast("list[str]", full["modules"]))
    assert _present(cast("list[str]", light["modules"]), MODELS) == []


def test_mr_comments_reads_a_config_with_review_and_web_sections_without_the_models(
        tmp_path: Path) -> None:
    """An operator who tunes reviews or serves the web face still gets the light reader
    (settings/light.py): no pydantic for `mr comments`, the same comments printed."""
    extra = ('\n[review]\napprove = false\nchanges_requested_on = ["critical", "warning"]\n'
             '\n[web]\nlisten = "127.0.0.1:8470"\ntrusted_header = "X-Forwarded-User"\n')
    [(_plain, plain_shown), (tuned, tuned_shown)] = _served_comments(tmp_path, "", extra)
    assert tuned_shown == plain_shown
    assert _present(cast("list[str]", tuned["modules"]), MODELS) == []
