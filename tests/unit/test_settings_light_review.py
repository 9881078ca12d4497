"""A second-opinion review of the light config reader (settings/light.py): documents on which
`light.parse` broke its contract ("settings, or None; never an error of its own") and made
`livereview mr` end with a Python traceback and exit 1, where the models (and so every other
command) say one config-error line and exit 2; and names the system refuses to look up,
which made the models themselves end in a traceback."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from livereview.settings import ConfigError, parse
from livereview.settings.light import parse as light_parse

ENV = {"T": "glpat-env-token-value", "K": "sk-key"}


def _base(tmp_path: Path) -> dict[str, object]:
    return {"daemon": {"database_url": f"sqlite:///{tmp_path / 'db.sqlite'}"},
            "ai": {"api_key_env": "K"},
            "hosts": [{"name": "gl", "type": "gitlab", "url": "https://gitlab.example",
                       "token_env": "T"}],
            "repos": [{"host": "gl", "path": "a/b"}]}


def _refused_by_both(data: Mapping[str, object], env: Mapping[str, str]) -> None:
    with pytest.raises(ConfigError):
        parse(data, env, secrets=True)
    assert light_parse(data, env) is None  # not an exception: the models must get to say it


# tomllib reads integers of any size; `number` calls math.isfinite (and float) on them.
@pytest.mark.parametrize("value", [10**400, 2**1024], ids=["10**400", "2**1024"])
@pytest.mark.parametrize(("section", "key"), [("daemon", "poll_interval_seconds"),
                                              ("ai", "temperature"),
                                              ("hosts", "request_timeout_seconds")])
def test_an_integer_too_large_for_a_float_is_left_to_the_models(
        tmp_path: Path, section: str, key: str, value: int) -> None:
    data = _base(tmp_path)
    hosts = data["hosts"]
    assert isinstance(hosts, list)
    table = hosts[0] if section == "hosts" else data[section]
    assert isinstance(table, dict)
    table[key] = value
    _refused_by_both(data, ENV)


# TOML allows "\u0000"; open() raises a plain ValueError (not OSError, not Invalid) on it,
# which settings/secret.py's _read_file does not catch: pydantic turns it into an error line,
# light.parse lets it through.
@pytest.mark.parametrize("where", ["host", "routed", "ai"])
def test_a_secret_file_name_with_a_nul_is_left_to_the_models(tmp_path: Path,
                                                             where: str) -> None:
    data = _base(tmp_path)
    hosts = data["hosts"]
    assert isinstance(hosts, list)
    host = hosts[0]
    if where == "host":
        host.update(token_env="", token_file="tok\x00")
    elif where == "routed":
        host["tokens"] = [{"repos": ["o/*"], "token_file": "tok\x00"}]
    else:
        data["ai"] = {"api_key_env": "", "api_key_file": "key\x00"}
    _refused_by_both(data, ENV)


def test_mr_says_the_models_config_error_not_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    config = tmp_path / "c.toml"
    config.write_text(f"""
[daemon]
database_url = "sqlite:///{tmp_path / 'db.sqlite'}"
poll_interval_seconds = {10**400}
[ai]
api_key_env = "K"
[[hosts]]
name = "gl"
type = "gitlab"
url = "https://gitlab.example"
token_env = "T"
[[repos]]
host = "gl"
path = "a/b"
""", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "livereview", "--config", str(config), "mr",  # noqa: S603
                           "show", "gl:a/b!1"], capture_output=True, text=True, timeout=60,
                          env={**ENV, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
                          check=False)
    assert "Traceback" not in done.stderr
    assert done.returncode == 2, done.stderr
    assert "config error: daemon.poll_interval_seconds" in done.stderr


def test_a_secret_readable_once_is_still_there_for_the_models_when_the_light_reader_declines(
        tmp_path: Path) -> None:
    """`token_file = "/dev/fd/3"` (`livereview mr … 3< <(pass show gitlab)`) is read once.
    The light reader reads each host's token before it meets a key it leaves to the models
    (here `[[repos]] knowledge`); it then says None and `_configured` has the models read
    the file again: empty. On main, the models alone read it, and take the config."""
    import os

    read_end, write_end = os.pipe()
    os.write(write_end, b"glpat-piped-token-value\n")
    os.close(write_end)
    try:
        data = _base(tmp_path)
        hosts, repos = data["hosts"], data["repos"]
        assert isinstance(hosts, list) and isinstance(repos, list)
        hosts[0].update(token_env="", token_file=f"/dev/fd/{read_end}")
        repos[0]["knowledge"] = ["docs/adr/*.md"]
        assert light_parse(data, ENV) is None  # as cli/commands.py `_configured` calls it...
        settings = parse(data, ENV, secrets=True)  # ...then the models, on the same file
        assert settings.hosts[0].token.reveal() == "glpat-piped-token-value"
    finally:
        os.close(read_end)


@pytest.mark.parametrize(("key", "value"), [("ca_bundle", "/tmp/" + "x" * 5000),
                                            ("ca_bundle", "ca\x00.pem")])
def test_a_file_name_the_system_cannot_look_up_is_a_config_error_line(
        tmp_path: Path, key: str, value: str) -> None:
    """Was: `Path.is_file` raised OSError (name too long) or ValueError (a NUL) through the
    models' validator, and every command ended in a traceback."""
    data = _base(tmp_path)
    hosts = data["hosts"]
    assert isinstance(hosts, list)
    hosts[0][key] = value
    with pytest.raises(ConfigError, match="no such file"):
        parse(data, ENV, secrets=True)
    assert light_parse(data, ENV) is None


def test_a_secret_readable_once_is_left_to_the_models_when_a_later_secret_fails(
        tmp_path: Path) -> None:
    """Review s6: the second pass read the piped token, then met the model's key unset and
    said None; the models found the pipe empty and said so, not that the key is missing."""
    import os

    read_end, write_end = os.pipe()
    os.write(write_end, b"glpat-piped-token-value\n")
    os.close(write_end)
    try:
        data = _base(tmp_path)
        hosts = data["hosts"]
        assert isinstance(hosts, list)
        hosts[0].update(token_env="", token_file=f"/dev/fd/{read_end}")
        env = {k: v for k, v in ENV.items() if k != "K"}
        assert light_parse(data, env) is None
        with pytest.raises(ConfigError, match="environment variable K is not set"):
            parse(data, env, secrets=True)
    finally:
        os.close(read_end)


def test_a_secret_file_that_is_not_utf8_is_said_to_be_so(tmp_path: Path) -> None:
    """Review s6: the NUL clause (ValueError) came before UnicodeDecodeError, a ValueError
    too, and a Latin-1 token file was said to have a NUL in its name."""
    token = tmp_path / "token"
    token.write_bytes(b"glpat-caf\xe9\n")
    data = _base(tmp_path)
    hosts = data["hosts"]
    assert isinstance(hosts, list)
    hosts[0].update(token_env="", token_file=str(token))
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        parse(data, ENV, secrets=True)
    assert light_parse(data, ENV) is None


def test_a_web_token_readable_once_is_left_to_the_models_to_judge(tmp_path: Path) -> None:
    """A `[web]` token_file that is a pipe is read once: had the light reader read it, found
    it too short and said None, the models would find the pipe empty and say that instead of
    what is wrong (settings/light.py `_settings`)."""
    import os

    read_end, write_end = os.pipe()
    os.write(write_end, b"web-15-chars-xx\n")
    os.close(write_end)
    try:
        data = {**_base(tmp_path), "web": {"token_file": f"/dev/fd/{read_end}"}}
        assert light_parse(data, ENV) is None
        with pytest.raises(ConfigError, match="must be at least 16 characters"):
            parse(data, ENV, secrets=True)
    finally:
        os.close(read_end)
