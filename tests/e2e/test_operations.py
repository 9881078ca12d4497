"""What an operator installs: `health` for the container, the systemd unit, the Dockerfile."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from livereview.cli import main
from tests.e2e.conftest import Sandbox

ROOT = Path(__file__).resolve().parents[2]


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
