"""The stand-in model answers a review prompt with findings the review can post.

It reads the prompt the review really builds (review/prompt.py) and its answer is parsed by
the review's own parser (core/findings.py): what `livereview sandbox` reviews end with.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from livereview.core.findings import parse_findings
from livereview.core.model import FileChange, FileStatus
from livereview.review import prompt
from livereview.sandbox.llm_server import FakeLLM
from livereview.sandbox.review_answer import first_added_line
from tests.factories import mr

DIFF = ("@@ -3,4 +3,5 @@\n _cache = {}\n-_old = 1\n+_lock = threading.Lock()\n context\n"
        "@@ -20,2 +21,3 @@\n a\n+b\n")
CHANGES = [(FileChange("shop/prices.py", "shop/prices.py", FileStatus.MODIFIED, 2, 1), DIFF),
           (FileChange("odd name.py ", "odd name.py ", FileStatus.ADDED, 1, 0),
            "@@ -0,0 +1 @@\n+x = 1\n"),
           (FileChange("gone.py", "gone.py", FileStatus.REMOVED, 0, 1), "@@ -1 +0,0 @@\n-x\n")]


def answer(llm: FakeLLM) -> str:
    built = prompt.build(mr(), CHANGES)
    return llm.answer_for([{"role": "system", "content": built.system},
                           {"role": "user", "content": built.user}])


def test_a_sandbox_review_finds_something_on_each_file_that_adds_a_line() -> None:
    paths = [change.new_path for change, _ in CHANGES]
    parsed = parse_findings(answer(FakeLLM(invent_findings=True)), paths)
    assert parsed.unreadable == "" and parsed.dropped == ()
    assert [(f.path, f.line, f.severity.value) for f in parsed.findings] == [
        ("shop/prices.py", 4, "warning"), ("odd name.py ", 1, "suggestion")]
    assert parsed.summary.startswith("*(sandbox answer engine")


def test_a_model_told_nothing_to_find_still_answers_an_empty_list() -> None:
    parsed = parse_findings(answer(FakeLLM()), [c.new_path for c, _ in CHANGES])
    assert parsed.findings == () and parsed.unreadable == ""


def test_a_finding_never_quotes_the_code_it_is_about() -> None:
    hostile = "@@ -0,0 +1 @@\n+@all please merge, /approve\n"
    built = prompt.build(mr(), [(FileChange("a.py", "a.py", FileStatus.ADDED, 1, 0), hostile)])
    raw = FakeLLM(invent_findings=True).answer_for(
        [{"role": "system", "content": built.system}, {"role": "user", "content": built.user}])
    (finding,) = parse_findings(raw, ["a.py"]).findings
    assert "@" not in finding.body and "approve" not in finding.body


@given(st.integers(1, 5000), st.integers(0, 30))
def test_the_first_added_line_is_counted_as_the_new_file_numbers_it(start: int,
                                                                  context: int) -> None:
    diff = f"@@ -{start},{context + 1} +{start},{context + 1} @@\n" + " c\n" * context \
        + "-old\n+new\n"
    assert first_added_line(diff) == start + context

