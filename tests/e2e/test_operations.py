"""What an operator installs: `health` for the container, the systemd unit, the Dockerfile."""

from __future__ import annotations

import os
import re
import shutil
import socket
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from livereview.cli.commands import main
from tests.e2e.conftest import TOKEN, Daemon, Sandbox, wait_for, write_config
from tests.e2e.test_cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
# What the operator's first start does: the daemon creates its folder and file (modes) and
# migrates them; `check` and `health` create nothing (tests/sqlite_template.py).
pytestmark = pytest.mark.creates_database("the daemon creates, migrates and protects its file")


def tool(name: str) -> str:
    """A linter CI installs; locally, a missing one skips (CI fails instead)."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found:
        return found
    if os.environ.get("CI"):
        pytest.fail(f"{name} is not installed; .ci/run should have installed it")
    pytest.skip(f"{name} is not installed")


def test_health_fails_before_the_first_poll_and_passes_after(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--config", str(sandbox.config), "health"]) == 1
    assert "gl: no successful poll yet" in capsys.readouterr().out
    assert not sandbox.db.parent.exists()  # a health check creates no database
    assert sandbox.once() == 0
    capsys.readouterr()
    assert main(["--config", str(sandbox.config), "health"]) == 0
    assert "gl: last successful poll" in capsys.readouterr().out


def test_health_fails_when_the_last_poll_is_too_old(sandbox: Sandbox,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert sandbox.once() == 0
    capsys.readouterr()
    assert main(["--config", str(sandbox.config), "health", "--max-age", "0.000001"]) == 1
    assert "older than" in capsys.readouterr().out


def test_systemd_unit_verifies(tmp_path: Path) -> None:
    analyze = tool("systemd-analyze")
    unit = (ROOT / "systemd" / "livereview.service").read_text(encoding="utf-8")
    assert "ExecStart=/usr/local/bin/livereview run" in unit
    # verify insists that ExecStart exists: point it at this checkout's entry point.
    local = tmp_path / "livereview.service"
    local.write_text(unit.replace("/usr/local/bin/livereview",
                                  str(Path(sys.executable).parent / "livereview")))
    result = subprocess.run([analyze, "verify", str(local)], capture_output=True,  # noqa: S603
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == ""


def test_dockerfile_lints_clean_and_runs_as_non_root() -> None:
    hadolint = tool("hadolint")
    result = subprocess.run([hadolint, str(ROOT / "Dockerfile")], capture_output=True,  # noqa: S603
                            text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert 'CMD ["livereview", "health"]' in dockerfile
    assert "USER 10001:10001" in dockerfile
    assert 'VOLUME ["/var/lib/livereview"]' in dockerfile


def tree(root: Path) -> dict[str, int]:
    """Every path under root with its mode: what a command created, and how private."""
    return {str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode)
            for p in sorted(root.rglob("*"))}


@pytest.mark.sqlite_only("no database file or directory appears; the default path under $HOME")
def test_check_and_health_create_nothing_and_say_what_they_found(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """Was: both created the database's directory and file (and `check` wrote a row)."""
    home = tmp_path / "home"
    home.mkdir()
    db = tmp_path / "missing" / "dir" / "livereview.db"
    write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, db)
    default = sandbox.config.with_name("default.toml")  # database_url unset: under $HOME
    default.write_text("\n".join(line for line in sandbox.config.read_text().splitlines()
                                 if not line.startswith("database_url")))
    before = tree(tmp_path)
    env = {"LIVEREVIEW_E2E_TOKEN": TOKEN, "HOME": str(home)}
    checked = run_cli("--config", str(sandbox.config), "check", env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert re.search(rf"daemon +database +ok +{db} does not exist yet: the first `once` or "
                     "`run` creates it", checked.stdout)
    for config in (sandbox.config, default):
        healthy = run_cli("--config", str(config), "health", env=env)
        assert (healthy.returncode, healthy.stdout.strip()) == (1, "gl: no successful poll yet")
    assert run_cli("--config", str(default), "check", env=env).returncode == 0
    assert tree(tmp_path) == before


@pytest.mark.sqlite_only("the database file's modification time")
def test_check_reads_an_existing_database_without_writing_it(sandbox: Sandbox) -> None:
    assert sandbox.once() == 0
    before = sandbox.db.stat().st_mtime_ns, tree(sandbox.db.parent)
    result = run_cli("--config", str(sandbox.config), "check",
                     env={"LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert result.returncode == 0
    assert re.search(rf"database +ok +{sandbox.db}: 0 reply jobs, 0 waiting, 0 failed",
                     result.stdout)
    assert (sandbox.db.stat().st_mtime_ns, tree(sandbox.db.parent)) == before


@pytest.mark.sqlite_only("file modes 0600/0700 of the database and its WAL files")
def test_the_database_and_its_wal_files_are_private(
        sandbox: Sandbox, start_daemon: Callable[[], Daemon]) -> None:
    """Was: 0644 files in a 0755 directory, holding every comment the bot read."""
    result = run_cli("--config", str(sandbox.config), "once",
                     env={"LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(sandbox.db.parent.stat().st_mode) == 0o700
    assert tree(sandbox.db.parent) == {"livereview.db": 0o600}
    daemon = start_daemon()  # the -wal and -shm files exist while it runs
    wait_for(lambda: "daemon_started" in daemon.output())
    assert tree(sandbox.db.parent) == {"livereview.db": 0o600, "livereview.db-shm": 0o600,
                                       "livereview.db-wal": 0o600}
    assert daemon.stop() == 0


def test_metrics_address_in_use_is_one_line_naming_the_key(sandbox: Sandbox) -> None:
    """Was: a traceback ending in `OSError: Address already in use`."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        listen = f"127.0.0.1:{taken.getsockname()[1]}"
        write_config(sandbox.config, sandbox.gitlab_server.url, sandbox.llm.url, sandbox.db,
                     metrics_listen=listen)
        result = run_cli("--config", str(sandbox.config), "run",
                         env={"LIVEREVIEW_E2E_TOKEN": TOKEN})
    assert result.returncode == 1
    assert result.stderr.strip() == (f"livereview: daemon.metrics_listen: cannot listen on "
                                     f"{listen}: Address already in use")
