"""Database URLs that name no file SQLite can keep are bad input, for `db` and the config.

`db copy --to sqlite://host/tmp/x.db` printed SQLAlchemy's traceback, and `--to sqlite:///`
reported "copied N rows" into an in-memory database thrown away at exit (found by an
attack session). The config's `daemon.database_url` takes the same rule.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.settings import ConfigError, parse

BAD = {
    "sqlite://host/tmp/x.db": "a SQLite database is a file, sqlite:///PATH (three slashes)",
    "sqlite:///": "an in-memory SQLite database keeps nothing",
    "sqlite://": "an in-memory SQLite database keeps nothing",
    "sqlite:///:memory:": "an in-memory SQLite database keeps nothing",
    "mysql://db/x": "expected sqlite:///PATH or postgresql+psycopg://USER@HOST/DB",
}


@pytest.mark.parametrize(("url", "said"), BAD.items())
def test_db_copy_refuses_it_in_one_line(url: str, said: str, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    source = f"sqlite:///{tmp_path / 'a.db'}"
    assert main(["db", "copy", "--from", source, "--to", url]) == 2
    err = capsys.readouterr().err
    assert err == f"livereview: db: --to: {said}, got {url!r}\n" or (
        said in err and err.count("\n") == 1), err
    assert main(["db", "copy", "--from", url, "--to", source]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "a.db").exists()


@pytest.mark.parametrize(("url", "said"), BAD.items())
def test_the_config_refuses_it_naming_the_key(url: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse({"daemon": {"database_url": url},
               "hosts": [{"name": "gl", "type": "gitlab", "url": "https://gl.example",
                          "token_env": "T"}],
               "repos": [{"host": "gl", "path": "a/b"}]}, {"T": "x", "OPENAI_API_KEY": "k"})
    assert str(caught.value).startswith(f"daemon.database_url: {said}")
