"""Reading the code a question names stays bounded and cached (docs/DESIGN.md §10.1), on the fake
GitLab and the fake GitHub."""

from __future__ import annotations

from livereview.core.triggers import replied_to
from tests.e2e.conftest import GITHUB_FILES, GITHUB_REPO, PROJECT, GitHubSandbox, Sandbox


def file_reads(sandbox: Sandbox) -> list[str]:
    return [path for method, path, _ in sandbox.gitlab.requests
            if method == "GET" and "/repository/files/" in path]


def test_a_question_naming_many_symbols_reads_no_more_files_than_allowed(
        sandbox: Sandbox) -> None:
    files = {f"src/mod{n}.py": ("", f"def present_{n}():\n    return {n}\n") for n in range(30)}
    iid = sandbox.gitlab.add_mr(PROJECT, title="many files", author="bob", files=files)
    sandbox.config.write_text(sandbox.config.read_text() + "\n[answers]\nmax_files_read = 3\n")
    names = " ".join(f"`missing_{n}`" for n in range(8))
    sandbox.gitlab.add_note(PROJECT, iid, author="alice", body=f"@livereview where are {names}?")
    before = len(file_reads(sandbox))
    assert sandbox.once() == 0
    assert len(file_reads(sandbox)) - before == 3
    prompt = sandbox.llm.llm.prompts[-1][-1]["content"]
    assert "### Named in the question, not found in the MR's files" in prompt
    assert "missing_0, missing_1, missing_2, missing_3, missing_4" in prompt


def test_the_second_answer_on_the_same_head_reads_the_code_from_the_cache(
        sandbox: Sandbox) -> None:
    # `once` is one process: two questions on one head, answered one after the other.
    files = {"src/a.py": ("", "def helper_one():\n    return 1\n"),
             "src/b.py": ("", "def helper_two():\n    return 2\n")}
    iid = sandbox.gitlab.add_mr(PROJECT, title="helpers", author="bob", files=files)
    first = sandbox.gitlab.add_note(PROJECT, iid, author="alice",
                                    body="@livereview what does helper_two() return?")
    second = sandbox.gitlab.add_note(PROJECT, iid, author="alice",
                                     body="@livereview and is helper_two() tested?")
    assert sandbox.once() == 0
    replies = [replied_to(str(n["body"])) for n in sandbox.bot_notes()]
    assert str(first["id"]) in replies and str(second["id"]) in replies
    reads = file_reads(sandbox)
    assert len([p for p in reads if p.endswith("src%2Fb.py/raw")]) == 1
    prompts = [p[-1]["content"] for p in sandbox.llm.llm.prompts[-2:]]
    assert all("definition of `helper_two` in src/b.py" in p for p in prompts)


def test_on_github_a_review_comment_gets_the_line_and_the_definition_it_names(
        gh: GitHubSandbox) -> None:
    gh.review_comment("@livereview what does `get` return, given src/cache.py:4?")
    assert gh.once() == 0
    prompt = gh.llm.llm.prompts[-1][-1]["content"]
    assert "definition of `get` in src/cache.py" in prompt
    assert "    7 def get(key):\n    8     with lock:\n    9         return cache.get(key)" \
        in prompt
    assert ">>    4 lock = threading.Lock()" in prompt


def test_a_forbidden_file_leaves_the_code_out_and_the_question_is_still_answered(
        sandbox: Sandbox) -> None:
    sandbox.gitlab.inject_fault("GET", r"/repository/files/", status=403, times=5)
    note = sandbox.note("@livereview what does `src/cache.py:9` do?")
    assert sandbox.once() == 0
    assert [n for n in sandbox.bot_notes() if replied_to(str(n["body"])) == str(note["id"])]
    prompt = sandbox.llm.llm.prompts[-1][-1]["content"]
    assert "## Code the question names" not in prompt


def test_on_github_an_outdated_review_thread_gets_the_interdiff_at_its_line(
        gh: GitHubSandbox) -> None:
    question = gh.review_comment("the read is not under the lock")
    _, new = GITHUB_FILES["src/cache.py"]
    gh.github.push(GITHUB_REPO, gh.number, message="read under the lock", files={
        "src/cache.py": ("", new.replace("return cache.get(key)", "return cache.get(key, None)"))})
    gh.github.reply_review_comment(GITHUB_REPO, gh.number, question["id"], author="alice",
                                   body="@livereview is this fixed now?")
    assert gh.once() == 0
    prompt = gh.llm.llm.prompts[-1][-1]["content"]
    assert "## What changed in this file since the thread started" in prompt
    assert "The anchored line 9 was changed (now line 9)." in prompt
    assert "+        return cache.get(key, None)" in prompt
