"""Structured answers (with a prose fallback) and lesson scoping — pure."""

from __future__ import annotations

import json

import pytest

from livereview.core.answer import heuristic_mode, parse, render
from livereview.core.lessons import applicable, duplicate_of, normalized, scopes_for, valid_scope
from livereview.core.model import Lesson


def test_a_json_answer_is_read_whole() -> None:
    raw = json.dumps({"mode": "disagreement", "severity": "correctness", "concede": False,
                      "answer": "The lock guards the resize in `put`.",
                      "citations": [{"ref": "src/cache.py:14", "title": "put"}],
                      "lesson": {"key": "k", "value": "v"}, "resolve": False})
    answer = parse(raw, "I don't think the lock is needed")
    assert (answer.mode, answer.severity, answer.concede, answer.structured) == (
        "disagreement", "correctness", False, True)
    assert answer.lesson is None  # only a concession carries a lesson
    assert [c.ref for c in answer.citations] == ["src/cache.py:14"]
    assert render(answer).startswith("**Correctness** (this matters): The lock guards")


def test_a_json_answer_inside_a_code_fence_is_read_too() -> None:
    raw = '```json\n{"mode": "help", "answer": "Use a context manager."}\n```'
    assert parse(raw, "how?").text == "Use a context manager."


@pytest.mark.parametrize("raw", ["Plain prose answer.", '{"no_answer_key": 1}', "{broken"])
def test_a_model_that_cannot_do_json_still_answers_in_prose(raw: str) -> None:
    answer = parse(raw, "why is this lock here?")
    assert (answer.text, answer.structured, answer.mode) == (raw, False, "clarification")


@pytest.mark.parametrize(("question", "mode"), [
    ("I disagree, this is not needed", "disagreement"),
    ("That's wrong: reads are atomic", "disagreement"),
    ("Why is this here?", "clarification"),
    ("Please suggest a better name", "help"),
])
def test_heuristic_mode(question: str, mode: str) -> None:
    assert heuristic_mode(question) == mode


def test_scopes_nest_from_repo_to_global() -> None:
    assert scopes_for("gl", "acme/team/widgets") == [
        "repo:gl:acme/team/widgets", "group:gl:acme/team", "group:gl:acme", "global"]
    assert all(valid_scope(s) for s in scopes_for("gl", "a/b"))
    assert not valid_scope("team") and not valid_scope("repo:gl")


def test_only_active_lessons_of_covering_scopes_apply_most_specific_first() -> None:
    lessons = [Lesson("g", "v", "global", "active", id=1),
               Lesson("grp", "v", "group:gl:acme", "active", id=2),
               Lesson("mine", "v", "repo:gl:acme/widgets", "active", id=3),
               Lesson("theirs", "v", "repo:gl:acme/gadgets", "active", id=4),
               Lesson("pending", "v", "repo:gl:acme/widgets", "proposed", id=5),
               Lesson("other host", "v", "group:gh:acme", "active", id=6)]
    assert [lesson.key for lesson in applicable(lessons, "gl", "acme/widgets")] == [
        "mine", "grp", "g"]


def test_duplicates_are_the_same_principle_in_the_same_scope() -> None:
    known = [Lesson("Locks around dict reads!", "v", "repo:gl:a/b", "active", id=1),
             Lesson("Early returns", "v", "repo:gl:a/b", "rejected", id=2)]
    assert normalized("  LOCKS around, dict reads ") == "locks around dict reads"
    assert duplicate_of(Lesson("locks around dict reads", "w", "repo:gl:a/b"), known) == known[0]
    assert duplicate_of(Lesson("locks around dict reads", "w", "repo:gl:c/d"), known) is None
    assert duplicate_of(Lesson("early returns", "w", "repo:gl:a/b"), known) is None


def test_only_a_humans_thumbs_down_on_a_watched_concession_counts() -> None:
    from dataclasses import replace

    from livereview.core.lessons import turned_down
    from livereview.core.model import Reaction
    from tests.factories import ALICE, BOT, IDENTITY, msg, snapshot, thread

    down = Reaction("thumbsdown", ALICE)
    snap = snapshot(thread("t1", msg("1"), replace(msg("2", BOT), reactions=(down,)),
                           replace(msg("3", BOT), reactions=(Reaction("thumbsdown", BOT),)),
                           replace(msg("4", BOT), reactions=(Reaction("thumbsup", ALICE),)),
                           replace(msg("5", BOT), reactions=(Reaction("-1", ALICE),))))
    assert turned_down(snap, frozenset({"2", "3", "4", "5"}), IDENTITY) == {"2", "5"}
    assert turned_down(snap, frozenset({"3"}), IDENTITY) == set()


def test_a_model_answer_with_nul_or_a_lone_surrogate_can_be_stored() -> None:
    """PostgreSQL's text refuses NUL and no UTF-8 writer takes a lone surrogate: what the
    model writes (its answer, a lesson, a citation) is stored, so neither may survive."""
    raw = ('{"mode": "disagreement", "concede": true, "answer": "You are\\u0000 right\\ud800",'
           ' "lesson": {"key": "k\\u0000", "value": "v\\ud800"},'
           ' "citations": [{"ref": "r\\u0000", "title": "t\\ud800"}]}')
    parsed = parse(raw, "why not?")
    assert parsed.text == "You are right" and parsed.lesson == ("k", "v")
    assert [(c.ref, c.title) for c in parsed.citations] == [("r", "t")]
    assert parse("plain\x00 text", "why?").text == "plain text"
