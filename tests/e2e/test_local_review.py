"""`livereview review …` on real repositories, without a config file: the review, its
JSON export, people's actions, `wait` across processes, `update` after new commits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from livereview.cli.commands import main
from tests.local_repo import Repo, review_repo


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    try:
        code = main(["review", *args])
    except SystemExit as exc:  # bad usage, said by argparse as for every command
        code = int(str(exc.code))
    out, err = capsys.readouterr()
    return code, out, err


def request(capsys: pytest.CaptureFixture[str], repo: Repo, spec: str = "HEAD~1",
            *extra: str) -> dict[str, object]:
    code, out, err = run(capsys, "request", spec, "--repo", str(repo.path), "--title", "Geo",
                         "--json", *extra)
    assert code == 0, err
    review: dict[str, object] = json.loads(out)
    return review


def exported(repo: Repo) -> dict[str, object]:
    state: dict[str, object] = json.loads(
        (repo.path / ".livereview" / "review.json").read_text(encoding="utf-8"))
    return state


@pytest.fixture(autouse=True)
def _no_ai(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL", "LIVEREVIEW_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def test_request_prints_files_and_threads_and_exports_them(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    review = request(capsys, repo, "HEAD~1", "--description", '{"task": "geo", "n": 1}')
    listed = review["files"]
    assert isinstance(listed, list)
    files = {f["path"]: f for f in listed}
    assert [(f["additions"], f["deletions"]) for f in files.values()] == [
        (int(a) if a != "-" else 0, int(d) if d != "-" else 0)
        for a, d, _ in repo.numstat("HEAD~1")]
    assert files["new_name.txt"]["status"] == "renamed"
    assert files["new_name.txt"]["old_path"] == "old_name.txt"
    assert files["gone.txt"]["status"] == "deleted"
    assert files["logo.png"]["binary"] is True
    kinds = sorted((t["path"], t["line"], t["kind"]) for t in review["threads"])  # type: ignore[attr-defined]
    assert kinds == [("db/q.sql", 1, "todo"), ("geo.py", 2, "explanation"),
                     ("geo.py", 3, "todo"), ("page.html", 2, "fixme"),
                     ("web/greet.ts", 2, "question"), ("web/greet.ts", 3, "fixme")]
    state = exported(repo)
    assert state["reviews"] == [review]
    assert review["description"] == {"task": "geo", "n": 1}
    assert review["status"] == "pending"
    assert ".livereview/" in (repo.path / ".git/info/exclude").read_text().splitlines()
    assert repo.git("status", "--porcelain") == ""  # the state is git-ignored


def test_the_text_view_says_no_ai_answers_without_ai_settings(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    code, out, err = run(capsys, "request", "HEAD~1", "--repo", str(repo.path), "--title", "T")
    assert code == 0
    # A notice for the person, on stderr: stdout is the review a script reads.
    assert "no AI settings" in err and "no AI settings" not in out
    assert "R old_name.txt → new_name.txt  +1 -0" in out
    assert "logo.png  binary" in out
    code, out, _ = run(capsys, "show", "1", "--repo", str(repo.path))
    assert code == 0
    assert "todo  geo.py:3\n  Alice (code): math.pi" in out
    assert ">    3 |     return 3.14 * r * r  # TODO: math.pi" in out


def test_people_reply_approve_and_request_changes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    review = request(capsys, repo)
    thread = review["threads"][0]["id"]  # type: ignore[index]
    code, out, _ = run(capsys, "reply", "1", str(thread), "why 3.14?", "--repo",
                       str(repo.path), "--json")
    assert code == 0
    assert json.loads(out)["message"]["body"] == "why 3.14?"
    code, _, _ = run(capsys, "request-changes", "1", "--comment", "use math.pi",
                     "--repo", str(repo.path))
    assert code == 0
    state = exported(repo)["reviews"][0]  # type: ignore[index]
    assert state["status"] == "changes_requested"
    messages = [(m["author"], m["author_kind"], m["body"])
                for t in state["threads"] for m in t["messages"]]
    assert ("Alice", "human", "why 3.14?") in messages
    assert ("Alice", "human", "use math.pi") in messages
    assert run(capsys, "approve", "1", "--repo", str(repo.path))[0] == 0
    assert exported(repo)["reviews"][0]["status"] == "approved"  # type: ignore[index]


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    cases = [
        (["request", "nope", "--repo", str(repo.path), "--title", "T"],
         "range 'nope': 'nope' is not a commit"),
        (["request", "HEAD", "--repo", str(tmp_path), "--title", "T"],
         f"{tmp_path}: not a git repository"),
        (["request", "HEAD", "--repo", str(repo.path), "--title", "T", "--description", "{"],
         "--description: not JSON"),
        (["show", "7", "--repo", str(repo.path)], "no local review 7"),
        # Not a local verb: an MR reference, for the hosted review, which needs a config.
        (["https://gitlab.example/g/p/-/merge_requests/7"], "config error"),
        (["request", "HEAD~1", "--repo", str(repo.path)], "required: --title"),
        (["request", "HEAD~1", "--repo", str(repo.path), "--title", " "],
         "the review needs a title"),
    ]
    for args, said in cases:
        code, _, err = run(capsys, *args)
        assert code == 2, (args, err)
        assert said in err and err.count("\n") == 1, err
    request(capsys, repo)
    code, _, err = run(capsys, "reply", "1", "99", "hi", "--repo", str(repo.path))
    assert code == 2
    assert "review 1 has no thread 99" in err
    code, _, err = run(capsys, "reply", "1", "1", " \n", "--repo", str(repo.path))
    assert code == 2 and "the reply is empty" in err, err


def test_wait_in_another_process_gets_a_person_s_reply(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    review = request(capsys, repo)
    waiting = subprocess.Popen(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-m", "livereview", "review", "wait", "1", "--timeout", "60",
         "--repo", str(repo.path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        thread = next(t["id"] for t in review["threads"]  # type: ignore[attr-defined]
                      if t["messages"][0]["body"] == "math.pi")
        assert run(capsys, "reply", "1", str(thread), "please use math.pi", "--repo",
                   str(repo.path))[0] == 0
        out, err = waiting.communicate(timeout=60)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, err
    feedback = json.loads(out)
    assert feedback["timed_out"] is False
    assert [(f["body"], f["path"], f["line"], f["kind"]) for f in feedback["feedback"]] == [
        ("please use math.pi", "geo.py", 3, "todo")]
    # Handed out once: the next wait has nothing new and times out (exit 124).
    code, out, _ = run(capsys, "wait", "1", "--timeout", "0", "--repo", str(repo.path))
    assert code == 124
    assert json.loads(out)["timed_out"] is True


def test_a_verdict_is_feedback_too(tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    request(capsys, repo)
    run(capsys, "approve", "1", "--repo", str(repo.path))
    code, out, _ = run(capsys, "wait", "1", "--timeout", "5", "--repo", str(repo.path))
    assert code == 0
    assert json.loads(out)["status"] == "approved"
    assert json.loads(out)["status_changed"] is True


def test_update_after_new_commits_keeps_resolved_and_moves_the_rest(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    review = request(capsys, repo)
    by_text = {t["messages"][0]["body"]: t["id"] for t in review["threads"]}  # type: ignore[attr-defined]
    resolved = by_text["i18n"]
    run(capsys, "resolve", "1", str(resolved), "--repo", str(repo.path))
    # Two lines above the explanation; the SQL TODO is fixed (gone); a new FIXME appears.
    repo.commit("more", **{
        "geo_DOT_py": "import math\n\n" + (repo.path / "geo.py").read_text(),
        "db__q_DOT_sql": "SELECT id FROM users WHERE email = $1;\n",
        "web__greet_DOT_ts": "// FIXME: a new one\n" + (repo.path / "web/greet.ts").read_text(),
    })
    code, out, err = run(capsys, "update", "1", "--range", "HEAD~2", "--repo",
                         str(repo.path), "--json")
    assert code == 0, err
    updated = json.loads(out)
    threads = {t["id"]: t for t in updated["threads"]}
    assert threads[by_text["pi is close enough for the UI"]]["line"] == 4  # moved down by 2
    assert threads[by_text["math.pi"]]["line"] == 5
    assert threads[by_text["index on email"]]["line"] is None  # its code is gone
    assert threads[resolved]["resolved"] is True
    assert threads[resolved]["line"] == 3  # a resolved thread is left where it was
    assert threads[by_text["should this trim the name?"]]["line"] == 3
    new = [t for t in updated["threads"] if t["id"] not in by_text.values()]
    assert [(t["kind"], t["path"], t["line"]) for t in new] == [("fixme", "web/greet.ts", 1)]
    assert updated["range"] == "HEAD~2"
    assert updated["head_sha"] == repo.git("rev-parse", "HEAD").strip()
    assert exported(repo)["reviews"] == [updated]


def test_a_review_of_uncommitted_work(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    repo.write("keep.py", "x = 2\n# ❓ is 2 right?\n")
    review = request(capsys, repo, "HEAD")
    assert review["worktree"] is True
    assert [(t["path"], t["line"], t["kind"]) for t in review["threads"]] == [  # type: ignore[attr-defined]
        ("keep.py", 2, "question")]
    code, out, _ = run(capsys, "show", "1", "--repo", str(repo.path))
    assert code == 0
    assert ">    2 | # ❓ is 2 right?" in out


def test_hostile_text_never_reaches_the_terminal_raw(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    evil = "\x1b]0;owned\x07 \x1b[31mred\x1b[0m \u202eevil \x9b2J"
    repo.commit("evil", **{"x_DOT_py": f"# TODO: {evil}\n"})
    code, _, _ = run(capsys, "request", "HEAD~1", "--repo", str(repo.path), "--title", evil)
    assert code == 0
    run(capsys, "reply", "1", "1", f"reply {evil}", "--repo", str(repo.path))
    for args in (["show", "1"], ["show", "1", "--json"], ["wait", "1", "--timeout", "0"]):
        _, out, _ = run(capsys, *args, "--repo", str(repo.path))
        assert not any(c in out for c in "\x1b\x07\x9b\u202e"), args
    saved = json.loads((repo.path / ".livereview" / "review.json").read_text())
    assert saved["reviews"][0]["title"] == evil  # kept as written; only the terminal is spared
