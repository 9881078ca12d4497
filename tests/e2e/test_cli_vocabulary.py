"""One vocabulary across `review …`, `mr …` and `lessons …` (docs/local-reviews.md): a body
is `--body TEXT` or `--body -` (stdin) everywhere; the spellings of the release before still
work, each with one deprecation line on stderr; `review list` lists a repository's reviews
with their status; a lesson is named as `lessons list` prints it (`L1`) or by number."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from livereview.cli.commands import main
from tests.local_repo import Repo, review_repo

DEPRECATED = "is deprecated: use --body"


def review(capsys: pytest.CaptureFixture[str], repo: Repo, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(["review", *args, "--repo", str(repo.path)])
    except SystemExit as exc:  # bad usage, said by argparse
        code = int(str(exc.code))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _no_config(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LIVEREVIEW_CONFIG", "OPENAI_API_KEY", "LIVEREVIEW_AI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def _messages(capsys: pytest.CaptureFixture[str], repo: Repo) -> list[str]:
    code, out, _ = review(capsys, repo, "show", "1", "--json")
    assert code == 0
    return [m["body"] for t in json.loads(out)["threads"] for m in t["messages"]]


def test_reply_takes_its_text_as_body_or_from_stdin(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = review_repo(tmp_path / "r")
    assert review(capsys, repo, "request", "HEAD~1", "--title", "T")[0] == 0
    code, out, err = review(capsys, repo, "reply", "1", "1", "--body", "why 3.14?", "--json")
    assert code == 0 and DEPRECATED not in err
    assert json.loads(out)["message"]["body"] == "why 3.14?"
    monkeypatch.setattr("sys.stdin", io.StringIO("from stdin\nsecond line\n"))
    code, _, err = review(capsys, repo, "reply", "1", "1", "--body", "-")
    assert code == 0 and DEPRECATED not in err
    assert "from stdin\nsecond line\n" in _messages(capsys, repo)


def test_the_old_positional_reply_text_still_works_with_one_deprecation_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    assert review(capsys, repo, "request", "HEAD~1", "--title", "T")[0] == 0
    code, out, err = review(capsys, repo, "reply", "1", "1", "old spelling")
    assert code == 0
    assert [line for line in err.splitlines() if DEPRECATED in line] == [
        "livereview: review reply TEXT is deprecated: use --body (the old spelling goes in "
        "the next release)"]
    assert DEPRECATED not in out
    assert "old spelling" in _messages(capsys, repo)


def test_a_reply_with_no_body_or_two_is_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    assert review(capsys, repo, "request", "HEAD~1", "--title", "T")[0] == 0
    code, out, err = review(capsys, repo, "reply", "1", "1")
    assert (code, out) == (2, "")
    assert err == "livereview: review reply: --body is required (- reads it from stdin)\n"
    code, out, err = review(capsys, repo, "reply", "1", "1", "a", "--body", "b")
    assert (code, out) == (2, "")
    assert err == "livereview: review reply: give the text once, as --body\n"
    assert "a" not in _messages(capsys, repo) and "b" not in _messages(capsys, repo)


def test_request_changes_takes_body_and_still_the_old_comment(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    assert review(capsys, repo, "request", "HEAD~1", "--title", "T")[0] == 0
    code, _, err = review(capsys, repo, "request-changes", "1", "--body", "use math.pi")
    assert code == 0 and DEPRECATED not in err
    code, _, err = review(capsys, repo, "request-changes", "1", "--comment", "and tests")
    assert code == 0
    assert "review request-changes --comment is deprecated: use --body" in err
    assert {"use math.pi", "and tests"} <= set(_messages(capsys, repo))
    code, _, err = review(capsys, repo, "request-changes", "1")  # the body stays optional
    assert code == 0 and err == ""


def test_review_list_shows_every_review_with_its_status(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    code, out, err = review(capsys, repo, "list")
    assert (code, out, err) == (0, "no reviews\n", "")
    assert review(capsys, repo, "list", "--json")[1] == "[]\n"
    assert review(capsys, repo, "request", "HEAD~1", "--title", "First")[0] == 0
    assert review(capsys, repo, "request", "HEAD", "--title", "Second\u202e one")[0] == 0
    assert review(capsys, repo, "approve", "1")[0] == 0
    code, out, err = review(capsys, repo, "list")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == 2 and "\u202e" not in out  # titles are others' text: cleaned
    assert lines[0].split()[:2] == ["2", "pending"] and "HEAD" in lines[0]
    assert lines[1].split()[:2] == ["1", "approved"] and lines[1].endswith("First")
    code, out, _ = review(capsys, repo, "list", "--json")
    assert code == 0
    listed = [(r["id"], r["status"], r["title"]) for r in json.loads(out)]
    assert listed == [(2, "pending", "Second\u202e one"), (1, "approved", "First")]


def test_notices_for_people_go_to_stderr_and_stdout_stays_the_output(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = review_repo(tmp_path / "r")
    code, out, err = review(capsys, repo, "request", "HEAD~1", "--title", "T")
    assert code == 0 and out.startswith("review 1: T")
    assert "no AI settings" in err and "no AI settings" not in out
    for args in (("reply", "1", "1", "--body", "hi"), ("update", "1", "HEAD~1")):
        code, out, err = review(capsys, repo, *args)
        assert code == 0 and "no AI settings" in err and "no AI settings" not in out


def test_lessons_verbs_take_the_id_as_lessons_list_prints_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "livereview.toml"
    config.write_text(
        f'[daemon]\ndatabase_url = "sqlite:///{tmp_path / "state.db"}"\n\n'
        '[ai]\nbase_url = "http://127.0.0.1:9"\nmodel = "m"\napi_key_env = ""\n\n'
        '[[hosts]]\nname = "gl"\ntype = "gitlab"\nurl = "http://127.0.0.1:9"\n'
        'token_env = "LIVEREVIEW_E2E_TOKEN"\n\n[[repos]]\nhost = "gl"\npath = "acme/api"\n',
        encoding="utf-8")
    seed = tmp_path / "seed.toml"
    seed.write_text('[[lessons]]\nkey = "k"\nvalue = "v"\n\n[[lessons]]\nkey = "k2"\n'
                    'value = "v2"\n', encoding="utf-8")

    def lessons(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            code = main(["--config", str(config), "lessons", *args])
        except SystemExit as exc:
            code = int(str(exc.code))
        out, err = capsys.readouterr()
        return code, out, err

    assert lessons("import", str(seed))[0] == 0
    listed = lessons("list")[1]
    assert listed.startswith("L1 ") and "\nL2 " in listed
    assert lessons("approve", "L1")[1].startswith("L1    active")
    assert lessons("reject", "l2")[1].startswith("L2    rejected")
    assert lessons("archive", "1")[1].startswith("L1    archived")
    assert json.loads(lessons("show", "L2")[1])["status"] == "rejected"
    for bad in ("L", "L0", "LL1", "M1", "L-1"):
        code, out, err = lessons("show", bad)
        assert (code, out) == (2, "") and "argument id: expected" in err, bad
