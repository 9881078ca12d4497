"""A real git repository in a temporary directory, for the local-review tests."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ENV = {**os.environ, "GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": "alice@example.test",
       "GIT_COMMITTER_NAME": "Alice", "GIT_COMMITTER_EMAIL": "alice@example.test",
       "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.name", "Alice")
        self.git("config", "user.email", "alice@example.test")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.path, env=ENV,  # noqa: S603, S607
                              check=True, capture_output=True, text=True).stdout

    def write(self, path: str, content: str | bytes) -> None:
        target = self.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")

    def commit(self, message: str, **files: str | bytes) -> str:
        for name, content in files.items():
            self.write(name.replace("__", "/").replace("_DOT_", "."), content)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def numstat(self, *revs: str) -> list[tuple[str, str, str]]:
        """`git diff --numstat`'s rows as git prints them: (added, deleted, path)."""
        rows = []
        for line in self.git("diff", "--numstat", *revs).splitlines():
            added, deleted, path = line.split("\t", 2)
            rows.append((added, deleted, path))
        return rows


PY = ("def area(r):\n    # 💡 pi is close enough for the UI\n"
      "    return 3.14 * r * r  # TODO: math.pi\n")
TS = ("export function greet(name: string) {\n  // ❓ should this trim the name?\n"
      "  return `hi ${name}`; /* FIXME: i18n */\n}\n")
SQL = "-- TODO: index on email\nSELECT id FROM users WHERE email = $1;\n"
HTML = "<p>hello</p>\n<!-- FIXME: use the design system -->\n"


def review_repo(path: Path) -> Repo:
    """main: a base commit; then one with renames, a deletion, a binary file and marked
    comments in Python, TypeScript, SQL and HTML."""
    repo = Repo(path)
    repo.write("README.md", "# demo\n")
    repo.write("old_name.txt", "one\ntwo\nthree\nfour\nfive\n")
    repo.write("gone.txt", "bye\n")
    repo.write("keep.py", "x = 1\n")
    repo.commit("base")
    repo.git("mv", "old_name.txt", "new_name.txt")
    repo.git("rm", "-q", "gone.txt")
    repo.write("new_name.txt", "one\ntwo\nthree\nfour\nfive\nsix\n")
    repo.write("geo.py", PY)
    repo.write("web/greet.ts", TS)
    repo.write("db/q.sql", SQL)
    repo.write("page.html", HTML)
    repo.write("logo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00binary\x00data")
    repo.write("keep.py", "x = 2\n")
    repo.commit("feature")
    return repo
