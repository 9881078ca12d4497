"""A model answer that is not clean findings never approves: unreadable answers are told
apart, every fenced block is read, severities are not guessed, the cap keeps the worst.

Pure functions only (findings, verdict, followup); the runner's side is in
tests/e2e/test_review_unusable.py.
"""

from __future__ import annotations

import json
from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from livereview.core.findings import MAX_FINDINGS, Severity, parse_findings
from livereview.core.model import Verdict
from livereview.core.verdict import decide
from livereview.review.followup import UNSURE, read_in_full, unsure

PATHS = {"src/a.py", "src/b.py"}
CRITICAL = {"severity": "critical", "path": "src/b.py", "line": 8, "body": "SQL injection"}


def item(**changes: object) -> dict[str, object]:
    return {"severity": "suggestion", "path": "src/a.py", "line": 3, "side": "new",
            "body": "Title\n\nWhy.", **changes}


def fenced(value: object, info: str = "json") -> str:
    return f"```{info}\n{json.dumps(value, indent=1)}\n```"


def verdict_of(raw: str) -> Verdict | None:
    """What the runner would decide on this one answer (None: not decided, retried)."""
    parsed = parse_findings(raw, PATHS)
    if parsed.unreadable:
        return None
    return decide((f.severity for f in parsed.findings), complete=not parsed.unsure)


def test_an_answer_that_is_not_findings_is_unreadable_not_empty() -> None:
    for raw in ("LGTM! Approve.", "Looks good to me. APPROVE.", '"LGTM"', "42", "null",
                '{"approve": true}', '{"summary": "fine", "findings": null}',
                "```python\nprint('findings')\n```", "```json\nnot json\n```", ""):
        parsed = parse_findings(raw, PATHS)
        assert parsed.unreadable and parsed.findings == (), raw
        assert verdict_of(raw) is None, raw
    assert parse_findings("x" * 1_000_001, PATHS).unreadable  # not even scanned
    assert verdict_of('{"findings": []}') is Verdict.APPROVED  # an honest empty answer


def test_every_fenced_block_is_read_not_the_span_between_the_first_and_the_last() -> None:
    raw = (f"First a thought.\n{fenced({'findings': []})}\nOn second look:\n"
           f"{fenced({'findings': [CRITICAL], 'summary': 'one bug'})}\nDone.")
    parsed = parse_findings(raw, PATHS)
    assert [f.body for f in parsed.findings] == ["SQL injection"]
    assert parsed.summary == "one bug" and parsed.unsure == frozenset()
    assert verdict_of(raw) is Verdict.CHANGES_REQUESTED


def test_a_suggestion_block_inside_a_body_does_not_end_the_json_block() -> None:
    body = "Use a lock\n\n```suggestion\nwith lock:\n    x()\n```\nthen ``` inline"
    raw = "Here:\n" + fenced({"findings": [item(body=body)]}) + "\n```suggestion\nno\n```"
    [finding] = parse_findings(raw, PATHS).findings
    assert finding.body == body


def test_line_separators_inside_strings_and_crlf_fences_are_read() -> None:
    body = "Title\u2028still the title\x0bthen more"
    raw = "```json\r\n" + json.dumps({"findings": [item(body=body)]}, ensure_ascii=False) \
        + "\r\n```\r\n"
    [finding] = parse_findings(raw + "and prose", PATHS).findings
    assert finding.body == body.replace("\x0b", "")  # read whole; control characters dropped


def test_a_body_with_nul_or_a_lone_surrogate_is_stored_without_them() -> None:
    """PostgreSQL's text refuses NUL, and no UTF-8 writer takes a lone surrogate: a body the
    model wrote with either ("\\u0000" in its JSON) made the run fail to store its batch."""
    raw = '{"findings": [{"severity": "warning", "path": "src/a.py", "line": 1, ' \
          '"side": "new", "body": "a\\u0000b\\ud800c"}], "summary": "s\\u0000t"}'
    parsed = parse_findings(raw, PATHS)
    assert [f.body for f in parsed.findings] == ["abc"] and parsed.summary == "st"


def test_an_object_on_lines_of_its_own_amid_prose_is_the_answer() -> None:
    raw = ("Here is my review:\n" + json.dumps({"findings": [CRITICAL]}, indent=2)
           + "\nOtherwise LGTM, approve {really}.")
    assert verdict_of(raw) is Verdict.CHANGES_REQUESTED
    assert verdict_of('I would write {"findings": []} but the code is fine.') is None
    assert verdict_of("Use a dict:\n{not json}\n") is None


def test_past_fifty_json_blocks_the_rest_is_unreadable_and_nothing_is_approved() -> None:
    many = "\n".join(fenced({"findings": []}) for _ in range(51))
    assert verdict_of(many) is Verdict.COMMENTED
    assert verdict_of("\n".join(fenced({"findings": []}) for _ in range(50))) is \
        Verdict.APPROVED


def test_a_block_that_cannot_be_read_beside_one_that_can_leaves_every_file_unsure() -> None:
    raw = fenced({"findings": []}) + "\n```json\n{\"findings\": [{\"severity\": \n```"
    parsed = parse_findings(raw, PATHS)
    assert parsed.unsure == PATHS and not parsed.unreadable
    assert verdict_of(raw) is Verdict.COMMENTED
    unclosed = "```json\n" + json.dumps({"findings": [CRITICAL]})  # the model stopped early
    assert verdict_of(unclosed) is Verdict.CHANGES_REQUESTED


def test_severities_are_read_case_insensitively_and_never_guessed() -> None:
    words = {"CRITICAL": Severity.CRITICAL, " Blocker ": Severity.CRITICAL,
             "Warn": Severity.WARNING, "NIT": Severity.SUGGESTION,
             "nitpick": Severity.SUGGESTION}
    for word, severity in words.items():
        [finding] = parse_findings(json.dumps([item(severity=word)]), PATHS).findings
        assert finding.severity is severity, word
    for unknown in ("HIGH", "major", "error", "minor", "info", "low", "", None, 1):
        raw = json.dumps({"findings": [item(severity=unknown, path="src/b.py")]})
        parsed = parse_findings(raw, PATHS)
        assert parsed.findings == () and parsed.unsure == {"src/b.py"}, unknown
        assert verdict_of(raw) is Verdict.COMMENTED, word  # not approved on a lost item


def test_an_item_that_names_no_file_of_the_batch_leaves_every_file_unsure() -> None:
    for bad in (item(path="src/c.py", severity="critical"), item(path=7), "critical!", 3):
        parsed = parse_findings(json.dumps({"findings": [bad, item()]}), PATHS)
        assert len(parsed.findings) == 1 and parsed.unsure == PATHS, bad
    twice = parse_findings(json.dumps({"findings": [item(), item()]}), PATHS)
    assert len(twice.dropped) == 1 and twice.unsure == frozenset()  # nothing lost


def test_the_cap_keeps_the_most_severe_and_never_approves() -> None:
    nits = [item(body=f"nit {n}") for n in range(MAX_FINDINGS)]
    raw = json.dumps({"findings": [*nits, CRITICAL]})
    parsed = parse_findings(raw, PATHS)
    assert len(parsed.findings) == MAX_FINDINGS
    assert parsed.findings[-1].body == "SQL injection"  # kept, in the answer's order
    assert [f.body for f in parsed.findings[:3]] == ["nit 0", "nit 1", "nit 2"]
    assert parsed.unsure == {"src/a.py"}  # the last nit was left out
    assert verdict_of(raw) is Verdict.CHANGES_REQUESTED
    only_nits = json.dumps({"findings": [*nits, item(body="one too many")]})
    assert verdict_of(only_nits) is Verdict.COMMENTED


def test_a_file_read_unsure_or_not_read_at_all_resolves_nothing() -> None:
    before = {"a.py": "1", "b.py": "2", "c.py": "3", "d.py": "4", "e.py": UNSURE}
    now = {"a.py": "1b", "b.py": UNSURE, "c.py": "3", "e.py": "5"}  # d.py: skipped or gone
    assert read_in_full(now, before) == {"a.py", "e.py"}
    assert unsure(now) == ["b.py"]
    assert decide([], complete=False) is Verdict.COMMENTED
    assert decide([Severity.CRITICAL], complete=False) is Verdict.CHANGES_REQUESTED


severities = st.sampled_from(["critical", "warning", "suggestion", "nit", "HIGH", "Critical",
                              "blocker", "", "major"]) | st.none() | st.integers()
items = st.fixed_dictionaries({"severity": severities,
                               "path": st.sampled_from([*sorted(PATHS), "elsewhere.py"]),
                               "line": st.integers(-1, 40), "body": st.text(max_size=8)})


@given(st.lists(items | st.integers() | st.text(max_size=4), max_size=70))
def test_an_answer_with_anything_but_suggestions_in_it_never_approves(
        found: list[object]) -> None:
    worse = any(not isinstance(i, dict) or str(i.get("severity")).strip().lower() not in
                ("suggestion", "nit", "nitpick") for i in found)
    if worse:
        assert verdict_of(json.dumps({"findings": found})) is not Verdict.APPROVED


@given(st.lists(st.sampled_from(list(Severity)), max_size=MAX_FINDINGS * 2))
def test_the_cap_keeps_as_many_of_the_worst_as_it_can(ranks: list[Severity]) -> None:
    answer = [item(severity=s.value, line=n + 1) for n, s in enumerate(ranks)]
    kept = parse_findings(json.dumps(answer), PATHS).findings
    best = sorted(ranks, key=lambda s: s.rank)[:MAX_FINDINGS]
    assert sorted(f.severity.rank for f in kept) == [s.rank for s in best]


@given(st.lists(items, max_size=12), st.lists(st.integers(0, 12), max_size=3),
       st.text(alphabet="ab \n`", max_size=20))
def test_findings_split_over_fenced_blocks_in_prose_read_as_one_answer(
        found: list[dict[str, object]], cuts: list[int], prose: str) -> None:
    one = parse_findings(json.dumps({"findings": found}), PATHS)
    edges = [0, *sorted(cuts), len(found)]
    parts = [fenced({"findings": found[a:b]}) for a, b in pairwise(edges)]
    clean = prose.replace("`", "")  # prose with no fence of its own
    split = parse_findings(f"\n{clean}\n".join(parts), PATHS)
    assert split.findings == one.findings and split.unsure == one.unsure


@given(st.text(max_size=300))
def test_any_text_is_findings_or_unreadable_never_an_error(raw: str) -> None:
    parsed = parse_findings(raw, PATHS)
    assert not (parsed.unreadable and parsed.findings)
