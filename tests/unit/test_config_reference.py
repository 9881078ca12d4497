"""docs/configuration.md is generated from the settings models and cannot drift from them.

The page states each key's type, default, bounds and meaning; the meaning is the docstring
under the field. These tests compare the committed page with a fresh generation, check it
against the shipped example config (written by hand), and check that a key nobody
documented stops the generation instead of leaving a blank row.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from livereview.settings import Settings
from livereview.settings.reference import Table, UndocumentedKey, page, row
from livereview.settings.section import Section

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "configuration.md"
SCRIPT = ROOT / "docs" / "gen_config_reference.py"


def test_the_committed_page_is_a_fresh_generation() -> None:
    assert PAGE.read_text(encoding="utf-8") == page(), (
        "docs/configuration.md is stale: run python docs/gen_config_reference.py")


def example_tables() -> list[list[str]]:
    """Every key the example config shows, set or commented out, as the page names it, per
    table of the file (`[[hosts]]` appears several times)."""
    example = (ROOT / "livereview.toml.example").read_text(encoding="utf-8")
    tables: list[list[str]] = [[]]
    prefix = ""
    for line in example.splitlines():
        table = re.match(r"#? ?(\[\[?)([\w.]+)\]\]?", line)
        if table:
            prefix = f"{table[2]}[]." if table[1] == "[[" else f"{table[2]}."
            tables.append([])
            continue
        key = re.match(r"#? ?(\w+) = ", line)
        if key:
            tables[-1].append(prefix + key[1])
    return tables


def example_keys() -> list[str]:
    return [key for table in example_tables() for key in table]


def test_every_key_of_the_example_config_has_a_row() -> None:
    keys = example_keys()
    assert {"daemon.poll_interval_seconds", "hosts[].token_env", "knowledge.global",
            "knowledge.groups[].entries", "review.notify_url", "repos[].answers"} <= set(keys)
    text = PAGE.read_text(encoding="utf-8")
    missing = [key for key in keys if f"| `{key}` |" not in text]
    assert not missing


def test_keys_the_loader_derives_are_not_offered_as_settings() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for key in ("hosts[].token", "ai.api_key", "source"):
        assert f"| `{key}` |" not in text


def test_the_example_config_names_each_key_once_per_table() -> None:
    for keys in example_tables():
        assert len(keys) == len(set(keys)), sorted(k for k in keys if keys.count(k) > 1)


class Undocumented(Section):
    documented: int = 1
    """Has a meaning."""
    silent: int = 2


def test_a_key_without_a_docstring_stops_the_generation() -> None:
    table = Table("[odd]", "odd.", Undocumented)
    assert row(table, "documented", Undocumented.model_fields["documented"]).startswith(
        "| `odd.documented` | integer | `1` |")
    with pytest.raises(UndocumentedKey, match=r"^odd\.silent: no docstring"):
        row(table, "silent", Undocumented.model_fields["silent"])


def test_every_settings_table_is_on_the_page() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for header in ("[[hosts]]", "[[repos]]", "[daemon]", "[bot]", "[ai]", "[lessons]",
                   "[answers]", "[knowledge]", "[[knowledge.groups]]", "[review]", "[web]"):
        assert f"## `{header}`" in text
    assert set(Settings.model_fields) - {"source"} == {
        "hosts", "repos", "daemon", "bot", "ai", "lessons", "answers", "knowledge", "review",
        "web"}


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args],  # noqa: S603 - our own script
                          capture_output=True, text=True, check=False)


def test_the_script_reports_a_stale_page_with_exit_1(tmp_path: Path) -> None:
    stale = tmp_path / "configuration.md"
    stale.write_text("# Configuration reference\n", encoding="utf-8")
    checked = run_script("--check", "--page", str(stale))
    assert (checked.returncode, checked.stdout) == (1, "")
    assert checked.stderr.count("\n") == 1 and "stale" in checked.stderr
    assert run_script("--page", str(stale)).returncode == 0
    assert stale.read_text(encoding="utf-8") == page()
    assert run_script("--check", "--page", str(stale)).returncode == 0
