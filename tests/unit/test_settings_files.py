"""A config file that cannot be read is one line naming the file and the cause, never a
traceback (a non-UTF-8 file once raised a raw UnicodeDecodeError)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from livereview.settings import ConfigError, load

ENV = {"T": "x", "OPENAI_API_KEY": "k"}
VALID = ('[[hosts]]\nname = "gl"\ntype = "gitlab"\nurl = "https://gitlab.example"\n'
         'token_env = "T"\n\n[[repos]]\nhost = "gl"\npath = "a/b"\n')


def error(path: Path) -> str:
    with pytest.raises(ConfigError) as caught:
        load(path, ENV)
    message = str(caught.value)
    assert len(message.splitlines()) == 1
    return message


def test_a_valid_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "livereview.toml"
    path.write_text(VALID, encoding="utf-8")
    assert load(path, ENV).source == path


def test_a_file_not_in_utf8_names_the_byte_and_its_line(tmp_path: Path) -> None:
    path = tmp_path / "livereview.toml"
    path.write_bytes(VALID.encode() + b"# caf\xe9 = Latin-1\n")
    assert error(path) == (f"{path}: not UTF-8 text (byte 0xe9 on line 10); save it as UTF-8")


def test_a_directory(tmp_path: Path) -> None:
    assert error(tmp_path) == f"{tmp_path}: is a directory, not a config file"


def test_a_symlink_loop(tmp_path: Path) -> None:
    path = tmp_path / "livereview.toml"
    path.symlink_to(path)
    assert error(path) == f"{path}: cannot read: Too many levels of symbolic links"


def test_a_missing_file_says_how_to_make_one(tmp_path: Path) -> None:
    assert "livereview init" in error(tmp_path / "none.toml")


@pytest.mark.parametrize("text", ["", "\n\n", "# only comments\n# here\n"])
def test_an_empty_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "livereview.toml"
    path.write_text(text, encoding="utf-8")
    assert error(path) == (f"{path}: no settings in the file (`livereview init` writes a "
                           "commented example)")


@pytest.mark.parametrize(("text", "expected"), [
    ("[daemon\n", "invalid TOML: Expected ']' at the end of a table declaration (at line 1"),
    ('[ai]\nmodel = "unterminated\n', "invalid TOML: Illegal character '\\n' (at line 2"),
    ("[glpat-Zx9QwErTy7UiOp3AsDfG]\n[glpat-Zx9QwErTy7UiOp3AsDfG]\n",
     "invalid TOML: Cannot declare ('***',) twice (at line 2"),
])
def test_invalid_toml_names_the_line_and_no_token(tmp_path: Path, text: str,
                                                  expected: str) -> None:
    path = tmp_path / "livereview.toml"
    path.write_text(text, encoding="utf-8")
    assert error(path).startswith(f"{path}: {expected}")


def test_a_file_the_user_may_not_read(tmp_path: Path) -> None:
    path = tmp_path / "livereview.toml"
    path.write_text(VALID, encoding="utf-8")
    path.chmod(0)
    # root reads anything: then it runs without the capability that lets it (as a daemon
    # confined by systemd would).
    confined = (["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
                if os.geteuid() == 0 else [])
    result = subprocess.run(  # noqa: S603 - our own package
        [*confined, sys.executable, "-c", "import sys; from pathlib import Path\n"
         "from livereview.settings import ConfigError, load\n"
         "try: load(Path(sys.argv[1]), {})\nexcept ConfigError as e: print(e)", str(path)],
        capture_output=True, text=True, timeout=60, check=False)
    assert result.stdout == f"{path}: cannot read: Permission denied\n", result.stderr
