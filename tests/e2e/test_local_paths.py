"""Files whose paths differ only in whitespace or control characters stay apart in a local
review: git is read with -z and its C-quoted diff headers unquoted, so each thread is on its
exact path; `review show` and the AI's prompt show them apart (quoted), and a finding on
one lands on that one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from livereview.cli.commands import main
from livereview.sandbox.llm_server import FakeLLMServer
from tests.local_repo import Repo

# The exact paths, and the text of each file's one marked line (a TODO: a thread).
FILES = {"a.py": "x = 1  # TODO: plain", "a.py ": "x = 2  # TODO: trailing space",
         "a\tb.py": "y = 1  # TODO: tab", "a\nb.py": "z = 1  # TODO: newline"}


def twins(path: Path) -> Repo:
    repo = Repo(path)
    repo.write("README.md", "# twins\n")
    repo.commit("base")
    for name, line in FILES.items():
        repo.write(name, line + "\n")
    repo.commit("twins")
    return repo


def run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    code = main(["review", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


@pytest.fixture(autouse=True)
def _no_ai(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL", "LIVEREVIEW_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def test_each_marked_line_opens_a_thread_on_its_exact_path(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = twins(tmp_path / "r")
    review = json.loads(run(capsys, "request", "HEAD~1", "--repo", str(repo.path),
                            "--title", "t", "--json"))
    assert sorted(f["path"] for f in review["files"]) == sorted(FILES)
    assert sorted((t["path"], t["code"]) for t in review["threads"]) == sorted(FILES.items())
    exported = json.loads((repo.path / ".livereview" / "review.json").read_text("utf-8"))
    assert sorted(t["path"] for t in exported["reviews"][0]["threads"]) == sorted(FILES)


def test_review_show_tells_the_files_apart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = twins(tmp_path / "r")
    run(capsys, "request", "HEAD~1", "--repo", str(repo.path), "--title", "t")
    shown = run(capsys, "show", "1", "--repo", str(repo.path)).splitlines()
    files = [line for line in shown if line.startswith("  A ")]
    assert sorted(files) == sorted(['  A a.py  +1 -0', '  A "a.py "  +1 -0',
                                    '  A "a\\tb.py"  +1 -0', '  A "a\\nb.py"  +1 -0'])
    threads = [line.split("  ", 1)[1] for line in shown if line.startswith("#")]
    assert sorted(threads) == sorted(['a.py:1', '"a.py ":1', '"a\\tb.py":1', '"a\\nb.py":1'])
    code = {line.split("  ", 1)[1]: shown[i + 2] for i, line in enumerate(shown)
            if line.startswith("#")}
    assert code['"a.py ":1'].endswith("| x = 2  # TODO: trailing space")
    assert code["a.py:1"].endswith("| x = 1  # TODO: plain")


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        monkeypatch.setenv("LIVEREVIEW_AI_BASE_URL", server.url)
        monkeypatch.setenv("LIVEREVIEW_AI_MODEL", "sandbox")
        yield server


def test_a_finding_on_one_of_two_look_alike_files_lands_on_that_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], llm: FakeLLMServer) -> None:
    repo = twins(tmp_path / "r")
    # The sandbox model answers for the paths its prompt shows ("### file: PATH (…"): it
    # finds something only in the file shown as "a.py " and in the one with a tab, naming
    # the first by its exact path and the second as the prompt showed it.
    llm.llm.review_findings = {
        '"a.py "': [{"severity": "critical", "path": "a.py ", "line": 1,
                     "body": "Trailing space in a file name"}],
        '"a\\tb.py"': [{"severity": "critical", "path": '"a\\tb.py"', "line": 1,
                        "body": "A tab in a file name"}]}
    review = json.loads(run(capsys, "request", "HEAD~1", "--repo", str(repo.path),
                            "--title", "t", "--json"))
    findings = sorted((t["path"], t["code"], t["messages"][0]["body"].split("\n")[0])
                      for t in review["threads"] if t["kind"] == "finding")
    assert findings == [
        ("a\tb.py", FILES["a\tb.py"], "🔴 **Critical · correctness** — A tab in a file name"),
        ("a.py ", FILES["a.py "], "🔴 **Critical · correctness** — Trailing space in a file name")]
    prompt = next(m[-1]["content"] for m in llm.llm.prompts
                  if "reviewing a merge request" in m[0]["content"])
    assert '### file: "a.py " (added' in prompt and "### file: a.py (added" in prompt


def test_every_name_git_quotes_in_a_diff_header_keeps_its_thread_on_that_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # git C-quotes a name holding a control character, DEL, a double quote or a backslash
    # (quote.c, sq_lookup); local_notes must undo exactly what git did, for each of them.
    specials = [*map(chr, range(1, 32)), "\x7f", '"', "\\", "é", " "]
    repo = Repo(tmp_path / "r")
    repo.write("README.md", "# names\n")
    repo.commit("base")
    names = {f"n{c}x.py": f"v = {i}  # TODO: {i}" for i, c in enumerate(specials)}
    for name, line in names.items():
        repo.write(name, line + "\n")
    repo.commit("names")
    review = json.loads(run(capsys, "request", "HEAD~1", "--repo", str(repo.path),
                            "--title", "t", "--json"))
    assert sorted((t["path"], t["code"]) for t in review["threads"]) == sorted(names.items())
