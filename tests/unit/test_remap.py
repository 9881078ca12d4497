"""Where a thread's line went between two heads (core/remap.py): properties over generated
files, and the cases a reviewer meets after a rebase."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from livereview.core.remap import Fate, Remapped, context, remap

# Distinct lines: with repeated lines "which one is it" has no single answer, and difflib may
# match a deleted duplicate to its twin (the general property below still holds for them).
UNIQUE = st.lists(st.from_regex(r"[a-z]{1,6}( = [0-9]{1,3})?", fullmatch=True), min_size=1,
                  max_size=40, unique=True)
ANY = st.lists(st.sampled_from(["a", "b", "c", "", "  x = 1", "}"]), max_size=30)


def text(lines: list[str]) -> str:
    return "".join(f"{line}\n" for line in lines)


@settings(deadline=None)
@given(UNIQUE, st.data())
def test_an_unchanged_file_maps_every_line_to_itself(lines: list[str], data: st.DataObject
                                                      ) -> None:
    line = data.draw(st.integers(1, len(lines)))
    assert remap(text(lines), text(lines), line) == Remapped(Fate.SAME, line)


@settings(deadline=None)
@given(UNIQUE, st.data())
def test_lines_inserted_above_shift_the_line_by_their_count(lines: list[str],
                                                             data: st.DataObject) -> None:
    line = data.draw(st.integers(1, len(lines)))
    at = data.draw(st.integers(0, line - 1))  # insert before the line
    count = data.draw(st.integers(1, 12))
    inserted = [f"NEW {n}" for n in range(count)]  # never equal to a generated line
    after = lines[:at] + inserted + lines[at:]
    assert remap(text(lines), text(after), line) == Remapped(Fate.MOVED, line + count)


@settings(deadline=None)
@given(UNIQUE, st.data())
def test_a_deleted_line_is_gone_and_the_lines_below_move_up(lines: list[str],
                                                            data: st.DataObject) -> None:
    line = data.draw(st.integers(1, len(lines)))
    after = lines[:line - 1] + lines[line:]
    assert remap(text(lines), text(after), line) == Remapped(Fate.GONE, None)
    if line < len(lines):
        below = remap(text(lines), text(after), line + 1)
        assert below == Remapped(Fate.MOVED, line)


@settings(deadline=None)
@given(ANY, ANY, st.data())
def test_a_line_found_at_the_new_head_reads_the_same_there(old: list[str], new: list[str],
                                                           data: st.DataObject) -> None:
    line = data.draw(st.integers(1, max(len(old), 1)))
    found = remap(text(old), text(new), line)
    if found.line is not None:
        assert new[found.line - 1] == old[line - 1]
        assert found.fate is (Fate.SAME if found.line == line else Fate.MOVED)
    else:
        assert found.fate in (Fate.GONE, Fate.CHANGED)


def test_a_line_rewritten_in_place_is_changed_not_moved() -> None:
    before = text(["def get(key):", "    return cache.get(key)", "", "x = 1"])
    after = text(["def get(key):", "    return cache.get(key, None)", "", "x = 1"])
    assert remap(before, after, 2) == Remapped(Fate.CHANGED, None)


def test_a_line_past_the_end_of_the_earlier_file_is_gone() -> None:
    assert remap("a\nb\n", "a\nb\n", 3) == Remapped(Fate.GONE, None)
    assert remap("a\n", "", 1) == Remapped(Fate.GONE, None)


def test_the_context_is_the_lines_around_the_line_cut_at_the_files_ends() -> None:
    body = text([f"line {n}" for n in range(1, 8)])
    assert context(body, 4) == "line 2\nline 3\nline 4\nline 5\nline 6"
    assert context(body, 1) == "line 1\nline 2\nline 3"
    assert context(body, 7, around=1) == "line 6\nline 7"
