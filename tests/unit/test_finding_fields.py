"""A finding's category and confidence, read from a hostile answer and shown in what is
posted; knowledge references with their kind and relevance (docs/DESIGN.md §10, §11)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from livereview.core.answer import Citation, StructuredAnswer, with_kinds
from livereview.core.findings import Category, Finding, Severity, parse_findings
from livereview.core.model import Side
from livereview.core.prompt import Reference, RefKind, kind_of, ranked
from livereview.review import render
from livereview.store.reviews import merged_knowledge

PATHS = {"src/billing/invoice.py"}


def answer(**changes: object) -> str:
    return json.dumps({"findings": [{"severity": "warning", "path": "src/billing/invoice.py",
                                     "line": 3, "body": "Rounding\n\nWhy.", **changes}]})


def test_category_and_confidence_are_read_from_the_answer() -> None:
    [found] = parse_findings(answer(category="Security", confidence=0.35), PATHS).findings
    assert (found.category, found.confidence) == (Category.SECURITY, 0.35)


def test_absent_or_unknown_labels_take_the_defaults_and_drop_nothing() -> None:
    [plain] = parse_findings(answer(), PATHS).findings
    [odd] = parse_findings(answer(category="vibes"), PATHS).findings
    assert (plain.category, plain.confidence) == (Category.GENERAL, 1.0)
    assert odd.category is Category.GENERAL


def test_a_percentage_is_read_as_a_confidence() -> None:
    [found] = parse_findings(answer(confidence=80), PATHS).findings
    assert found.confidence == 0.8


@given(st.one_of(st.booleans(), st.text(max_size=5), st.floats(max_value=-0.001),
                 st.floats(min_value=100.001), st.just(float("nan"))))
def test_a_confidence_that_is_not_one_drops_the_item_and_leaves_the_file_unsure(
        value: object) -> None:
    parsed = parse_findings(answer(confidence=value), PATHS)
    assert parsed.findings == ()
    assert parsed.unsure == frozenset(PATHS)
    assert "confidence" in parsed.dropped[0]


def test_the_posted_finding_starts_with_severity_and_category() -> None:
    body = render.finding_body("a1b2c3d4e5f60718", 1, Finding(
        Severity.WARNING, "m.py", 2, Side.NEW, "Off by one", Category.CORRECTNESS))
    assert body.startswith("🟠 **Warning · correctness** — Off by one")


def test_a_doubtful_finding_says_how_sure_the_model_is() -> None:
    body = render.finding_body("a1b2c3d4e5f60718", 1, Finding(
        Severity.SUGGESTION, "m.py", 2, Side.NEW, "Maybe", Category.STYLE, 0.4))
    assert body.startswith("🔵 **Suggestion · style** (confidence 40%) — Maybe")


def test_a_reference_kind_follows_its_name() -> None:
    assert kind_of("https://wiki/x") is RefKind.LINK
    assert kind_of("CONTRIBUTING.md") is RefKind.DOC
    assert kind_of("docs/adr/0001") is RefKind.DOC
    assert kind_of("src/billing/rules.py") is RefKind.CODE


def test_the_reference_about_the_changed_files_ranks_first() -> None:
    refs = [Reference("STYLE.md", "Use four spaces."),
            Reference("docs/billing.md", "Invoices round half even.")]
    first, second = ranked(refs, ["src/billing/invoice.py"])
    assert first.source == "docs/billing.md" and first.relevance > 0
    assert second.relevance == 0.0
    assert first.label == "docs/billing.md (doc, relevance 0.50)"


def test_a_reference_given_its_relevance_keeps_it() -> None:
    [finding] = ranked([Reference("the finding", "x", RefKind.FINDING, 1.0)], ["a/b.py"])
    assert finding.relevance == 1.0


def test_a_runs_knowledge_keeps_each_source_once_at_its_highest_relevance() -> None:
    merged = merged_knowledge(
        [{"source": "a.md", "kind": "doc", "relevance": 0.2}],
        [{"source": "a.md", "kind": "doc", "relevance": 0.5},
         {"source": "b.py", "kind": "code", "relevance": 0.3}])
    assert merged == [{"source": "a.md", "kind": "doc", "relevance": 0.5},
                      {"source": "b.py", "kind": "code", "relevance": 0.3}]


def test_a_citation_takes_the_kind_of_the_reference_it_names_or_of_its_form() -> None:
    shown = [Reference("docs/billing.md", "x", RefKind.DOC, 0.5)]
    answer = with_kinds(StructuredAnswer("a", "help", citations=(
        Citation("docs/billing.md"), Citation("src/a.py:3"), Citation("https://w/x"),
        Citation("a hunch"))), shown)
    assert [(c.kind, c.relevance) for c in answer.citations] == [
        ("doc", 0.5), ("code", 0.0), ("link", 0.0), ("", 0.0)]


def test_citations_stored_before_they_had_a_kind_still_read() -> None:
    old = StructuredAnswer.from_meta("a", {"citations": [["src/a.py:3", "t"]]})
    new = StructuredAnswer.from_meta("a", {"citations": [["d.md", "t", "doc", 0.5]]})
    assert old.citations == (Citation("src/a.py:3", "t"),)
    assert new.citations == (Citation("d.md", "t", "doc", 0.5),)
