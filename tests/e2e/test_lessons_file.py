"""`lessons import` reads the format docs/lessons-file.md describes: the example shipped in
contrib/ imports as it is, and a bad entry is one line naming the entry, its field and its
line, exit 2, with nothing imported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from livereview.cli.commands import main

EXAMPLE = Path(__file__).parents[2] / "contrib" / "lessons.example.toml"
DOCS = Path(__file__).parents[2] / "docs" / "lessons-file.md"


@pytest.fixture
def config(tmp_path: Path) -> Path:
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[daemon]\ndatabase_url = "sqlite:///{tmp_path / "state.db"}"\n\n'
        '[[hosts]]\nname = "gl"\ntype = "gitlab"\nurl = "http://127.0.0.1:9"\n'
        'token_env = "LIVEREVIEW_E2E_TOKEN"\n\n[[repos]]\nhost = "gl"\npath = "acme/api"\n',
        encoding="utf-8")
    return config


def lessons(config: Path, capsys: pytest.CaptureFixture[str], *args: str
            ) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(["--config", str(config), "lessons", *args])
    except SystemExit as exc:
        code = int(str(exc.code))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_shipped_example_imports_into_a_fresh_store(
        config: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", "t" * 20)
    assert lessons(config, capsys, "import", str(EXAMPLE)) == (
        0, "imported 3 lessons, merged 0 duplicates\n", "")
    code, out, _ = lessons(config, capsys, "list", "--json")
    assert code == 0
    found = [(x["key"], x["scope"], x["status"], x["created_by"]) for x in json.loads(out)]
    assert found == [
        ("Prefer early returns", "global", "proposed", ""),
        ("Locks around shared dict writes", "group:gl:acme", "active", "alice"),
        ("Tabs in Makefiles", "repo:gl:acme/api", "active", "")]
    assert json.loads(out)[1]["value"].startswith("Reads of a dict are atomic in CPython;")
    assert lessons(config, capsys, "import", str(EXAMPLE))[1] == (
        "imported 0 lessons, merged 3 duplicates\n")


@pytest.mark.parametrize(("text", "said"), [
    ('[[lessons]]\nkey = "a"\nvalue = "b"\n\n[[lessons]]\nkey = "k"\nvaule = "v"\n',
     "lessons[1].vaule (line 7): unknown field (fields: key, value, scope, status, "
     "source_message_id, created_by)"),
    ('[[lessons]]\nkey = "k"\n', "lessons[0].value (line 1): required, a non-empty string"),
    ('[[lessons]]\nkey = "  "\nvalue = "v"\n',
     "lessons[0].key (line 2): required, a non-empty string"),
    ('[[lessons]]\nkey = "k"\nvalue = "v"\nstatus = 1\n',
     "lessons[0].status (line 4): expected a string, got int"),
    ('[[lessons]]\nkey = "k"\nvalue = """\n[[lessons]]\n"""\nstatus = "done"\n',
     "lessons[0].status (line 6): expected one of proposed, active, rejected, archived, "
     "got 'done'"),
    ('lessons = [{key = "k", value = "v", scope = "team"}]',
     "lessons[0].scope: expected repo:<host>:<path>, group:<host>:<path> or global, "
     "got 'team'"),
    ("[lessons]\nkey = 'k'\n", "expected a list of lessons"),
    ("[[lessons]\n", "not TOML: "),
    ("lessons = [3]\n", "lessons[0]: expected a table of fields (key, value, …)"),
])
def test_a_bad_entry_is_one_line_naming_it_and_nothing_is_imported(
        text: str, said: str, config: Path, capsys: pytest.CaptureFixture[str],
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", "t" * 20)
    bad = tmp_path / "bad.toml"
    bad.write_text(text, encoding="utf-8")
    code, out, err = lessons(config, capsys, "import", str(bad))
    assert (code, out) == (2, "")
    assert err.startswith(f"livereview: lessons import: {bad}: {said}"), err
    assert err.count("\n") == 1
    assert lessons(config, capsys, "list")[1] == "no lessons\n"


def test_json_entries_are_named_and_checked_the_same(
        config: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIVEREVIEW_E2E_TOKEN", "t" * 20)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"lessons": [{"key": "a", "value": "b"}, {"key": 3}]}))
    code, _, err = lessons(config, capsys, "import", str(bad))
    assert code == 2
    assert err == f"livereview: lessons import: {bad}: lessons[1].key: expected a string, " \
                  "got int\n"
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"key": "a", "value": "b", "status": "active"}]))
    assert lessons(config, capsys, "import", str(good))[0] == 0


def test_import_help_points_to_the_format_and_the_example(
        config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = lessons(config, capsys, "import", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "docs/lessons-file.md" in text and "contrib/lessons.example.toml" in text
    assert DOCS.is_file() and EXAMPLE.name in DOCS.read_text(encoding="utf-8")
