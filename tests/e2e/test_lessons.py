"""Governed lessons: a conceded disagreement proposes a lesson; approval puts it in the
next prompts of that repo (and only that repo); export/import round-trips for review."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.sandbox.gitlab.model import JSON
from livereview.sandbox.llm_server import LLMFault
from tests.databases import query
from tests.e2e.conftest import PROJECT, Sandbox

CONCESSION = json.dumps({
    "mode": "disagreement", "severity": "style", "concede": True,
    "answer": "You are right: a lone dict read is atomic under the GIL, the lock is not "
              "needed there.",
    "lesson": {"key": "Locks around single dict reads",
               "value": "Do not ask for a lock around a single dict.get in CPython."},
    "citations": [{"ref": "src/cache.py:9", "title": "the read in question"}],
    "resolve": False,
})


@pytest.fixture
def conceded(sandbox: Sandbox) -> JSON:
    """The bot's concession on the sandbox MR: alice asked, the bot answered, she disagreed
    in the thread and the model conceded, proposing a lesson (the note is returned)."""
    question = sandbox.note("@livereview is this lock needed?")
    assert sandbox.once() == 0
    discussion = next(d["id"] for d in sandbox.gitlab.discussions(PROJECT, sandbox.iid)
                      if d["notes"][0]["id"] == question["id"])
    sandbox.llm.llm.faults.append(LLMFault(status=200, content=CONCESSION))
    sandbox.note("I disagree: dict.get is atomic in CPython, no lock needed.",
                 reply_to_discussion=str(discussion))
    assert sandbox.once() == 0
    return sandbox.bot_notes()[-1]


def lessons(sandbox: Sandbox, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert main(["--config", str(sandbox.config), "lessons", *args]) == 0
    return capsys.readouterr().out


def test_conceded_lesson_is_proposed_approved_and_used_only_in_its_repo(
        sandbox: Sandbox, conceded: JSON, capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.gitlab.add_project("acme/gadgets")
    other = sandbox.gitlab.add_mr("acme/gadgets", title="Other", author="bob",
                                  files={"a.py": ("x = 1\n", "x = 2\n")})
    sandbox.config.write_text(sandbox.config.read_text()
                              + '\n[[repos]]\nhost = "gl"\npath = "acme/gadgets"\n')
    concession = conceded
    assert str(concession["body"]).startswith("**Style** (a suggestion): You are right")
    listed = lessons(sandbox, capsys, "list")
    assert "L1    proposed  repo:gl:acme/widgets  Locks around single dict reads" in listed
    assert query(sandbox.db, "SELECT source_message_id, created_by FROM ai_memory") \
        == [(str(concession["id"]), "alice")]
    assert query(sandbox.db, "SELECT url FROM knowledge_refs WHERE host_message_id = :id",
                 id=str(concession["id"])) == [("src/cache.py:9",)]

    sandbox.note("@livereview and the writes?")
    sandbox.once()
    assert "Locks around single dict reads" not in sandbox.llm.llm.prompts[-1][-1]["content"]

    assert "active" in lessons(sandbox, capsys, "approve", "1")
    sandbox.note("@livereview what about the cache eviction?")
    sandbox.once()
    assert "[L1] Locks around single dict reads" in sandbox.llm.llm.prompts[-1][-1]["content"]
    assert query(sandbox.db, "SELECT lessons_used FROM reply_jobs ORDER BY id DESC")[0] \
        == ("1",)

    sandbox.gitlab.add_note("acme/gadgets", other, author="alice", body="@livereview lock?")
    sandbox.once()
    assert "Locks around single dict reads" not in sandbox.llm.llm.prompts[-1][-1]["content"]


def test_export_import_round_trip_merges_duplicates(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    exported = tmp_path / "lessons.toml"
    exported.write_text('[[lessons]]\nkey = "Prefer early returns"\nvalue = "Return early."\n'
                        'scope = "group:gl:acme"\nstatus = "active"\n')
    assert "imported 1 lessons, merged 0" in lessons(sandbox, capsys, "import", str(exported))
    assert "imported 0 lessons, merged 1" in lessons(sandbox, capsys, "import", str(exported))
    out = tmp_path / "out.json"
    lessons(sandbox, capsys, "export", "--format", "json", "--output", str(out))
    [item] = json.loads(out.read_text())["lessons"]
    assert (item["key"], item["scope"], item["status"]) == (
        "Prefer early returns", "group:gl:acme", "active")
    sandbox.note("@livereview thoughts?")
    sandbox.once()  # a group lesson applies to every repo of the group
    assert "Prefer early returns: Return early." in sandbox.llm.llm.prompts[-1][-1]["content"]


def test_bad_lesson_commands_are_one_line_and_exit_2(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    sandbox.once()
    assert main(["--config", str(sandbox.config), "lessons", "approve", "99"]) == 2
    assert "lessons approve: no lesson 99" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text('[[lessons]]\nkey = "k"\nvalue = "v"\nscope = "team"\n')
    assert main(["--config", str(sandbox.config), "lessons", "import", str(bad)]) == 2
    assert "lessons[0].scope (line 4): expected repo:<host>:<path>" in capsys.readouterr().err


def test_a_thumbs_down_on_the_concession_archives_its_proposed_lesson(
        sandbox: Sandbox, conceded: JSON, capsys: pytest.CaptureFixture[str]) -> None:
    concession = conceded
    assert "proposed" in lessons(sandbox, capsys, "list")
    sandbox.gitlab.award(PROJECT, sandbox.iid, int(concession["id"]), user="bob",
                         name="thumbsdown")  # award emoji do not bump the MR
    assert sandbox.once() == 0
    assert "L1    archived" in lessons(sandbox, capsys, "list")


@pytest.mark.sqlite_only("whether the database file exists before the first run")
@pytest.mark.creates_database("only `lessons import` may create the database")
def test_lesson_verbs_other_than_import_never_create_a_database(
        sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    """Before the first run (or with a mistyped database_url) `lessons list` said "no
    lessons" and left an empty database behind; now it says there is none."""
    db = sandbox.db
    assert not db.exists()
    for verb in (["list"], ["approve", "1"], ["export"]):
        assert main(["--config", str(sandbox.config), "lessons", *verb]) == 1
        assert "no database" in capsys.readouterr().err
        assert not db.exists()
    seed = sandbox.config.parent / "seed.toml"
    seed.write_text('[[lessons]]\nkey = "k"\nvalue = "v"\n', encoding="utf-8")
    assert "imported 1 lessons" in lessons(sandbox, capsys, "import", str(seed))
    assert "L1" in lessons(sandbox, capsys, "list")
