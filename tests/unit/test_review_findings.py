"""Findings read from a hostile model answer, the verdict, and follow-up de-duplication."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from livereview.core.findings import MAX_BODY_CHARS, MAX_FINDINGS, Severity, parse_findings
from livereview.core.model import Side, Verdict
from livereview.core.verdict import VerdictPolicy, decide
from livereview.review.followup import (
    Earlier,
    classify,
    fingerprint,
    fixed,
    follow_up,
    of,
    overflow,
)

PATHS = {"src/a.py", "src/b.py"}


def item(**changes: object) -> dict[str, object]:
    return {"severity": "warning", "path": "src/a.py", "line": 3, "side": "new",
            "body": "Title\n\nWhy.", **changes}


def test_a_well_formed_answer_in_a_code_fence() -> None:
    raw = "Here you go:\n```json\n" + json.dumps(
        {"findings": [item(), item(severity="CRITICAL", side="old", line="7")],
         "summary": "ok"}) + "\n```"
    parsed = parse_findings(raw, PATHS)
    assert [(f.severity, f.line, f.side) for f in parsed.findings] == [
        (Severity.WARNING, 3, Side.NEW), (Severity.CRITICAL, 7, Side.OLD)]
    assert parsed.summary == "ok" and parsed.dropped == ()


def test_bad_items_are_dropped_each_with_its_reason() -> None:
    bad = [42, item(severity="high"), item(path="etc/passwd"), item(path=["x"]),
           item(line=True), item(line=-1), item(line="3a"), item(side="middle"),
           item(body="   "), item(body=7)]
    parsed = parse_findings(json.dumps({"findings": [*bad, item()]}), PATHS)
    assert len(parsed.findings) == 1
    reasons = " | ".join(parsed.dropped)
    for fragment in ("not an object", "unknown severity 'high'", "'etc/passwd' is not a file",
                     "'list' is not a file", "True", "-1", "'3a'", "neither new nor old",
                     "has no text"):
        assert fragment in reasons, fragment
    assert len(parsed.dropped) == len(bad)


def test_not_json_or_the_wrong_shape_is_no_finding() -> None:
    assert parse_findings("LGTM!", PATHS).unreadable == "the answer is not JSON"
    assert parse_findings('{"findings": "none"}', PATHS).unreadable == \
        "the answer's JSON has no `findings` list"
    assert parse_findings(json.dumps([item()]), PATHS).findings  # a bare list is fine
    assert parse_findings("[" * 100_000, PATHS).findings == ()  # no RecursionError


def test_long_bodies_are_cut_and_floods_are_capped() -> None:
    parsed = parse_findings(json.dumps({"findings": [item(body="x" * 10_000)]}), PATHS)
    assert len(parsed.findings[0].body) == MAX_BODY_CHARS + 1
    flood = [item(line=n) for n in range(1, MAX_FINDINGS + 11)]
    parsed = parse_findings(json.dumps({"findings": flood}), PATHS)
    assert len(parsed.findings) == MAX_FINDINGS and len(parsed.dropped) == 10
    assert parsed.unsure == {"src/a.py"}  # what the cap left out may have mattered


def _containers(inner: st.SearchStrategy[object]) -> st.SearchStrategy[object]:
    return st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                         max_size=4)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    _containers, max_leaves=20)


@given(st.lists(st.fixed_dictionaries({}, optional={
    "severity": st.sampled_from(["critical", "warning", "suggestion", "nit"]) | json_values,
    "path": st.sampled_from(sorted(PATHS)) | json_values,
    "line": st.integers(-5, 10**8) | json_values, "side": st.sampled_from(["new", "old"])
    | json_values, "body": st.text() | json_values}) | json_values, max_size=8))
def test_whatever_the_model_answers_every_finding_is_well_formed(items: list[object]) -> None:
    parsed = parse_findings(json.dumps({"findings": items}), PATHS)
    assert len(parsed.findings) + len(parsed.dropped) == len(items)  # each is one or other
    for finding in parsed.findings:
        assert finding.path in PATHS and 0 < finding.line < 10_000_000
        assert finding.body.strip() and isinstance(finding.side, Side)


def test_any_critical_requests_changes_and_the_policy_is_configurable() -> None:
    assert decide([Severity.WARNING, Severity.CRITICAL]) is Verdict.CHANGES_REQUESTED
    assert decide([]) is Verdict.APPROVED
    assert decide([Severity.SUGGESTION]) is Verdict.APPROVED
    assert decide([Severity.WARNING]) is Verdict.COMMENTED
    strict = VerdictPolicy(changes_requested_on=frozenset({Severity.CRITICAL, Severity.WARNING}),
                           approve=False)
    assert decide([Severity.WARNING], strict) is Verdict.CHANGES_REQUESTED
    assert decide([], strict) is Verdict.COMMENTED


def test_fingerprints_ignore_lines_case_and_punctuation_not_the_file() -> None:
    assert fingerprint("a.py", "Lock is never released!\n\nbody") == \
        fingerprint("a.py", "lock is NEVER released")
    assert fingerprint("a.py", "Lock leak") != fingerprint("b.py", "Lock leak")


def test_follow_up_skips_settled_keeps_open_once_and_resolves_the_fixed() -> None:
    settled = Earlier(1, fingerprint("src/a.py", "Settled point"), "src/a.py", "t1", True)
    still = Earlier(2, fingerprint("src/a.py", "Still there"), "src/a.py", "t2", False)
    gone = Earlier(3, fingerprint("src/a.py", "Fixed now"), "src/a.py", "t3", False)
    elsewhere = Earlier(4, fingerprint("src/b.py", "Untouched"), "src/b.py", "t4", False)
    found = parse_findings(json.dumps({"findings": [
        item(body="Settled point"), item(body="Still there"), item(body="Brand new")]}),
        PATHS).findings
    result = follow_up(found, [settled, still, gone, elsewhere], changed_paths={"src/a.py"})
    assert [f.title for f in result.post] == ["Brand new"]
    assert (result.not_raised_again, result.already_open) == (1, 1)
    assert [e.id for e in result.fixed] == [3]  # b.py did not change: 4 stays open


@given(st.lists(st.tuples(st.sampled_from("abc"), st.booleans()), max_size=12),
       st.lists(st.sampled_from("abcd"), max_size=12))
def test_a_settled_point_is_never_posted_again_nor_resolved(
        earlier: list[tuple[str, bool]], new: list[str]) -> None:
    rows = [Earlier(i, fingerprint("src/a.py", t), "src/a.py", f"t{i}", s)
            for i, (t, s) in enumerate(earlier)]
    prints = [fingerprint("src/a.py", t) for t in new]
    kinds = classify(prints, rows)
    settled = {r.fingerprint for r in rows if r.settled}
    assert all(k != "new" for p, k in zip(prints, kinds, strict=True) if p in settled)
    assert all(not e.settled for e in fixed(rows, set(prints), {"src/a.py"}))
    found = parse_findings(json.dumps({"findings": [item(body=t) for t in new]}), PATHS)
    assert not {of(f) for f in follow_up(found.findings, rows, {"src/a.py"}).post} & settled


def test_inline_findings_beyond_the_limit_go_to_the_summary_least_severe_first() -> None:
    inline = [(1, Severity.SUGGESTION), (2, Severity.CRITICAL), (3, Severity.WARNING),
              (4, Severity.SUGGESTION)]
    assert overflow(inline, 4) == {}
    assert overflow(inline, 2) == {1: "outside", 4: "outside"}
