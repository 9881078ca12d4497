"""`livereview web` on the command line: one line and exit 2 for bad input (a non-loopback
address without authentication above all), and `livereview --help` without the web stack."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from livereview.cli.commands import main, parser
from livereview.web.command import plan
from tests.local_repo import Repo


def web(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["web", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("listen", ["0.0.0.0:8470", "192.0.2.7:80", "[::]:8470",
                                    "example.test:8470"])
def test_a_bind_beyond_loopback_without_authentication_is_refused_in_one_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, listen: str) -> None:
    code, out, err = web(capsys, "--listen", listen, "--repo", str(Repo(tmp_path / "r").path))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith("livereview web: --listen ")
    assert "--token-file" in err and "Traceback" not in err


@pytest.mark.parametrize(("args", "named"), [
    (["--listen", "nowhere"], "--listen"),
    (["--listen", "127.0.0.1:99999"], "--listen"),
    (["--token-file", "/nonexistent/token"], "--token-file"),
    (["--trusted-header", "x user"], "--trusted-header"),
])
def test_bad_options_are_one_line_naming_the_option(
        capsys: pytest.CaptureFixture[str], args: list[str], named: str) -> None:
    code, out, err = web(capsys, *args)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and named in err


def test_a_directory_that_is_not_a_repository_is_one_line(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = web(capsys, "--listen", "127.0.0.1:0", "--repo", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "--repo" in err


def test_a_short_token_is_refused_and_never_shown(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    code, _, err = web(capsys, "--listen", "0.0.0.0:0", "--token-file", str(token))
    assert code == 2 and "at least 16" in err and "s3cret" not in err


def test_with_a_token_or_a_proxy_header_a_non_loopback_bind_is_allowed(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("a-long-enough-token-0123456789\n")
    args = parser().parse_args(["web", "--listen", "0.0.0.0:0", "--token-file", str(token)])
    assert plan(args).token is not None
    args = parser().parse_args(["web", "--listen", "0.0.0.0:0",
                                "--trusted-header", "X-Forwarded-User"])
    assert plan(args).trusted_header == "X-Forwarded-User"


def test_livereview_help_does_not_import_the_web_stack() -> None:
    code = ("import sys\nfrom livereview.cli.commands import main\ntry:\n    main(['--help'])\n"
            "except SystemExit:\n    pass\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'starlette', 'uvicorn', 'jinja2'}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,  # noqa: S603
                          check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def _config(tmp_path: Path, repo: Repo, web_section: str) -> Path:
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[daemon]\ndatabase_url = "sqlite:///{tmp_path / "state.db"}"\nmetrics_listen = ""\n\n'
        '[ai]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\napi_key_env = ""\n\n'
        f"{web_section}\n"
        '[[hosts]]\nname = "laptop"\ntype = "local"\n\n'
        f'[[repos]]\nhost = "laptop"\npath = "{repo.path}"\n', encoding="utf-8")
    return config


def test_the_config_s_web_section_names_the_token_and_its_local_repositories(
        tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    token = tmp_path / "web-token"
    token.write_text("a-long-enough-token-0123456789\n")
    config = _config(tmp_path, repo, f'[web]\ntoken_file = "{token}"\n')
    args = parser().parse_args(["web", "--listen", "0.0.0.0:0", "--config", str(config)])
    chosen = plan(args)
    assert chosen.token is not None and chosen.repos == (repo.path,)
    assert "a-long-enough" not in repr(chosen)


def test_a_short_token_in_the_config_is_a_config_error_naming_the_key(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    repo = Repo(tmp_path / "r")
    token = tmp_path / "web-token"
    token.write_text("short-s3cret\n")
    config = _config(tmp_path, repo, f'[web]\ntoken_file = "{token}"\n')
    code, _, err = web(capsys, "--listen", "0.0.0.0:0", "--config", str(config))
    assert code == 2 and "web.token_file" in err and "short-s3cret" not in err
    assert err.count("\n") == 1


def test_a_config_without_local_hosts_serves_only_its_console(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[daemon]\ndatabase_url = "sqlite:///{tmp_path / "state.db"}"\n\n'
        '[ai]\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\napi_key_env = ""\n\n'
        '[[hosts]]\nname = "gl"\ntype = "gitlab"\nurl = "https://gitlab.example"\n'
        'token_env = "GL_TOKEN"\n\n[[repos]]\nhost = "gl"\npath = "g/p"\n', encoding="utf-8")
    monkeypatch.setenv("GL_TOKEN", "x")
    args = parser().parse_args(["web", "--config", str(config)])
    chosen = plan(args)
    assert chosen.repos == () and chosen.daemon is not None
