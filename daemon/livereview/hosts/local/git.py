"""git, through its own command line: what a local review needs from a repository.

Everything is asked of git in its machine-readable forms (`--numstat -z`, `--name-status -z`,
`log --format` with NUL separators), so nothing here re-implements what git reports: the
+/- counts are git's own, renames are git's rename detection. Calls are synchronous
(subprocess); the async host runs them in a thread.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from livereview.core.model import Commit
from livereview.hosts.base import HostError

GIT_TIMEOUT_SECONDS = 60.0
# One file's content, at most: the HTTP hosts' own answer limit (hosts[].max_response_mb).
MAX_FILE_BYTES = 32 * 2**20
# Pinned so that a user's git config cannot change what we read: no colours, no pager, no
# external diff or textconv, a/ and b/ prefixes (diff.noprefix), non-ASCII paths unquoted
# (a control character is still C-quoted in a diff header: local_notes unquotes it), renames
# detected as `git diff` does by default;
# a path given to git is that path, never a pattern (`--literal-pathspecs`: a file named
# `*.py` names itself, not every Python file).
_DIFF = ("diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "--src-prefix=a/",
         "--dst-prefix=b/")
# What a repository's own `.git/config` (an agent's checkout may write one; a clone carries
# none) could otherwise make git run: an fsmonitor command on every index read (`diff`,
# `ls-files`), hooks such as `post-index-change` on `add -N` in the throwaway index, and
# a signature check (`gpg.program`) when `log` shows signatures. Command-line `-c` wins
# over every config file (git-config(1), "CONFIGURATION FILE"). Clean filters are not
# among them: git has no switch for them, and only a driver configured by the user or the
# repository's config runs — a clone's `.gitattributes` alone names no command.
_PINNED = ("-c", "core.quotepath=off", "-c", "core.fsmonitor=false",
           "-c", f"core.hooksPath={os.devnull}", "-c", "log.showSignature=false")
# What points git at another repository, index or object store than the one it runs in: git's
# own list (`git rev-parse --local-env-vars`, environment.c `local_repo_env`, which git
# clears itself before it enters a submodule). A git hook exports GIT_DIR, and a pre-commit
# hook GIT_INDEX_FILE: a review started from one would read that repository's history.
REPO_ENV = frozenset({
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR"})
_SHA = re.compile(r"[0-9a-fA-F]{4,64}")
_STATUS = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed", "T": "modified",
           "C": "added"}


class GitError(HostError):
    """git failed on something that should have worked (a runtime failure)."""


class NotARepository(GitError):
    """The path is not inside a git working tree (bad input)."""


class BadRange(GitError):
    """The range names nothing git knows (bad input)."""


@dataclass(frozen=True, slots=True)
class GitRange:
    spec: str  # as the user wrote it
    base: str  # the commit the changes are measured from
    head: str  # the last commit; with `worktree`, HEAD (the changes go past it)
    worktree: bool = False  # the working tree and index against `base`

    @property
    def revs(self) -> tuple[str, ...]:
        """What `git diff` compares: two commits, or one commit and the working tree."""
        return (self.base,) if self.worktree else (self.base, self.head)


@dataclass(frozen=True, slots=True)
class NumstatRow:
    path: str
    old_path: str
    status: str  # added | modified | deleted | renamed
    additions: int
    deletions: int
    binary: bool


class Git:
    def __init__(self, top: Path) -> None:
        self.top = top

    @classmethod
    def open(cls, path: Path) -> Git:
        """The repository whose working tree holds `path` (NotARepository otherwise)."""
        if not path.is_dir():
            raise NotARepository(f"{path}: not a git repository (no such directory)")
        try:
            out = _run(path, "rev-parse", "--show-toplevel")
        except GitError as exc:
            raise NotARepository(f"{path}: not a git repository ({exc})") from None
        return cls(Path(out.decode().strip()))

    def run(self, *args: str, stdin: bytes | None = None) -> bytes:
        return _run(self.top, *args, stdin=stdin)

    def commit_of(self, rev: str) -> str | None:
        try:
            out = self.run("rev-parse", "--verify", "--quiet", "--end-of-options",
                           f"{rev}^{{commit}}")
        except GitError:
            return None
        return out.decode().strip() or None

    def empty_tree(self) -> str:
        """The empty tree's id (the base of a root commit), in this repo's hash."""
        return self.run("hash-object", "-t", "tree", "--stdin", stdin=b"").decode().strip()

    def resolve(self, spec: str) -> GitRange:
        """A range as a person writes it (see docs/local-reviews.md, "Ranges"):
        `HEAD` the working tree and index against HEAD; `A..B` and `A...B` as git reads
        them; a branch name its commits since it left the default branch; a commit sha
        that one commit; any other revision (`HEAD~3`, a tag) everything since it."""
        spec = spec.strip()
        if not spec or spec.startswith("-") or "\0" in spec:
            raise BadRange(f"range {spec!r}: expected HEAD, HEAD~N, A..B, a sha or a branch")
        if spec == "HEAD":
            head = self._need(spec, "HEAD", "the repository has no commit yet")
            return GitRange(spec, head, head, worktree=True)
        if "..." in spec:
            left, right = spec.split("...", 1)
            head = self._need(spec, right or "HEAD")
            base = self.run("merge-base", self._need(spec, left or "HEAD"), head)
            return GitRange(spec, base.decode().strip(), head)
        if ".." in spec:
            left, right = spec.split("..", 1)
            return GitRange(spec, self._need(spec, left or "HEAD"),
                            self._need(spec, right or "HEAD"))
        if self._is_branch(spec):
            return self._branch(spec)
        commit = self._need(spec, spec)
        if _SHA.fullmatch(spec) and commit.lower().startswith(spec.lower()):
            parents = self.run("rev-list", "--parents", "-n", "1", commit).decode().split()
            return GitRange(spec, parents[1] if len(parents) > 1 else self.empty_tree(),
                            commit)
        return GitRange(spec, commit, self._need(spec, "HEAD"))

    def _need(self, spec: str, rev: str, why: str = "") -> str:
        commit = self.commit_of(rev)
        if commit is None:
            raise BadRange(f"range {spec!r}: {why or f'{rev!r} is not a commit in {self.top}'}")
        return commit

    def _is_branch(self, name: str) -> bool:
        try:
            self.run("show-ref", "--verify", "--quiet", f"refs/heads/{name}")
        except GitError:
            return False
        return True

    def _branch(self, name: str) -> GitRange:
        head = self._need(name, name)
        for default in self._default_branches():
            if default != name and self._is_branch(default):
                base = self.run("merge-base", self._need(name, default), head)
                return GitRange(name, base.decode().strip(), head)
        raise BadRange(f"range {name!r}: no other default branch (main, master) to compare "
                       f"the branch with; write it as BASE..{name}")

    def branch_of(self, spec: str, r: GitRange) -> str:
        """The branch a review of `r` is about, to be `merged` later (see `merged_into`):
        the branch the range names (`feature`, `main..feature`), else a branch whose tip
        is the range's head and which no default branch holds yet; "" for none — work on a
        default branch itself, or on the working tree (uncommitted changes merge nowhere)."""
        if r.worktree:
            return ""
        defaults = set(self._default_branches())
        named = spec.split("..")[-1].lstrip(".") if ".." in spec else spec
        if named and named not in defaults and self._is_branch(named):
            return named
        if self.merged_into(r.head, "") is not None:
            return ""  # already on a default branch: nothing left to merge
        tips = self.run("for-each-ref", f"--points-at={r.head}", "--format=%(refname:short)",
                        "refs/heads/").decode().split()
        return next((t for t in tips if t not in defaults), "")

    def merged_into(self, head: str, branch: str) -> str | None:
        """The default branch (other than `branch`) that holds commit `head`, if any: git's
        own `merge-base --is-ancestor` (exit 0 yes, 1 no)."""
        for default in self._default_branches():
            if default == branch or not self._is_branch(default):
                continue
            done = _call(self.top, "merge-base", "--is-ancestor", "--end-of-options", head,
                         f"refs/heads/{default}")
            if done.returncode == 0:
                return default
            if done.returncode != 1:
                raise GitError(_said(done, "merge-base"))
        return None

    def _default_branches(self) -> list[str]:
        try:
            configured = self.run("config", "--get", "init.defaultBranch").decode().strip()
        except GitError:
            configured = ""
        return [b for b in (configured, "main", "master") if b]

    def numstat(self, r: GitRange, paths: Sequence[str] = ()) -> list[NumstatRow]:
        """Per-file status and +/- counts, exactly `git diff --numstat`'s; a working-tree
        range includes the files git does not track yet (see `_with_untracked`)."""
        with self._with_untracked(r, paths) as env:
            return self._numstat(r, paths, env)

    def untracked(self, paths: Sequence[str] = ()) -> list[str]:
        """The files a working-tree review adds although git does not track them (a coding
        agent's new files): not ignored, as `git ls-files --others --exclude-standard -z`
        lists them (of `paths` only, when given)."""
        out = self.run("ls-files", "--others", "--exclude-standard", "-z")
        found = [n.decode("utf-8", "surrogateescape") for n in out.split(b"\0") if n]
        # A directory entry ("sub/") is a nested repository: not a file of this one.
        return [n for n in found if not n.endswith("/") and _among(n, paths)]

    @contextlib.contextmanager
    def _with_untracked(self, r: GitRange, paths: Sequence[str]) -> Iterator[dict[str, str]]:
        """The environment for a `git diff` of `r` that sees the untracked files too: a
        throwaway copy of the index in which they are intent-to-add (`git add -N`), so git
        itself shows each as a new file — its counts, binary and rename detection, a
        symlink as its target's name (never followed). The repository's own index is not
        touched. Nothing to add (a commit range, no untracked file): no change."""
        untracked = self.untracked(paths) if r.worktree else []
        if not untracked:
            yield {}
            return
        index = self.top / self.run("rev-parse", "--git-path", "index").decode().strip()
        with tempfile.TemporaryDirectory(prefix="livereview-index-") as scratch:
            copy = Path(scratch) / "index"
            if index.exists():
                shutil.copyfile(index, copy)
            env = {"GIT_INDEX_FILE": str(copy)}
            _run(self.top, "add", "--intent-to-add", "--pathspec-from-file=-",
                 "--pathspec-file-nul", stdin=b"\0".join(os.fsencode(n) for n in untracked),
                 env={**env, "GIT_LITERAL_PATHSPECS": "1"})
            yield env

    def _numstat(self, r: GitRange, paths: Sequence[str], env: dict[str, str]
                 ) -> list[NumstatRow]:
        tail = ("--", *paths) if paths else ()
        counts = _run(self.top, *_DIFF, "--numstat", "-z", *r.revs, *tail, env=env)
        names = _run(self.top, *_DIFF, "--name-status", "-z", *r.revs, *tail, env=env)
        return _rows(counts.split(b"\0"), names.split(b"\0"))


    def diff(self, r: GitRange, paths: Sequence[str] = ()) -> str:
        """The unified diff of the range (of `paths` only, when given); a working-tree
        range's untracked files follow, each as a new file."""
        tail = ("--", *paths) if paths else ()
        with self._with_untracked(r, paths) as env:
            return _run(self.top, *_DIFF, *r.revs, *tail, env=env).decode("utf-8", "replace")

    def commits(self, r: GitRange) -> list[Commit]:
        """The range's commits, newest first (none for the working tree alone)."""
        if r.worktree:
            return []
        # A root commit's base is the empty tree, which `log A..B` does not take.
        span = [f"{r.base}..{r.head}"] if self.commit_of(r.base) else ["-1", r.head]
        out = self.run("log", "--format=%H%x00%P%x00%aI%x00%s%x00", *span)
        fields = out.decode("utf-8", "replace").split("\0")
        commits = []
        for i in range(0, len(fields) - 4, 4):
            sha, parents, when, title = (f.strip("\n") for f in fields[i:i + 4])
            commits.append(Commit(sha=sha, title=title, created_at=datetime.fromisoformat(when),
                                  parent_ids=tuple(parents.split())))
        return commits

    def show(self, rev: str, path: str) -> bytes:
        """A file's bytes at a commit, or in the working tree when `rev` is empty; never
        more than MAX_FILE_BYTES (a clone's blob of zeros packs small and unpacks to any
        size), and in the working tree only a file the review could show (see `_worktree`)."""
        if not rev:
            return self._worktree(path)
        blob = f"{rev}:{path}"
        size = self.run("cat-file", "-s", "--end-of-options", blob).decode().strip()
        if not size.isdigit() or int(size) > MAX_FILE_BYTES:
            raise GitError(f"{path} at {rev}: larger than {MAX_FILE_BYTES} bytes")
        return self.run("cat-file", "blob", "--end-of-options", blob)

    def _worktree(self, path: str) -> bytes:
        """A working-tree file as git would show it: one git tracks or would add (untracked,
        not ignored: never `.git/config`, an ignored `.env` or the store), inside the
        repository, a symlink as its target's name. What is not a regular file (a FIFO,
        whose open waits for a writer forever; a device) is refused without waiting."""
        listed = self.run("ls-files", "-z", "--cached", "--others", "--exclude-standard",
                          "--", path).split(b"\0")
        if not path or os.fsencode(path) not in listed:
            raise GitError(f"{path}: not a file of the working tree under review")
        target = self.top / path
        if not target.parent.resolve().is_relative_to(self.top.resolve()):
            raise GitError(f"{path}: outside the repository")
        kind = os.lstat(target).st_mode
        if stat.S_ISLNK(kind):
            return os.fsencode(os.readlink(target))
        if not stat.S_ISREG(kind):  # not even opened: a FIFO's open would count as a reader
            raise GitError(f"{path}: not a regular file")
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise GitError(f"{path}: not a regular file")
            data = handle.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise GitError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
        return data

    def exclude(self, pattern: str) -> None:
        """Ignore `pattern` in this clone only (.git/info/exclude: no tracked file changes)."""
        exclude = self.top / self.run("rev-parse", "--git-path", "info/exclude").decode().strip()
        text = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
        if pattern in text.splitlines():
            return
        exclude.parent.mkdir(parents=True, exist_ok=True)
        separator = "" if not text or text.endswith("\n") else "\n"
        exclude.write_text(f"{text}{separator}{pattern}\n", encoding="utf-8")

    def user(self) -> str:
        try:
            return self.run("config", "user.name").decode().strip() or "you"
        except GitError:
            return os.environ.get("USER", "you")


def _rows(counts: list[bytes], names: list[bytes]) -> list[NumstatRow]:
    """`--numstat -z` and `--name-status -z` of one diff, read together."""
    rows: list[NumstatRow] = []
    c = n = 0
    while n < len(names) and names[n]:
        letter = names[n].decode()[:1]
        paired = letter in ("R", "C")
        old = names[n + 1].decode("utf-8", "surrogateescape")
        new = names[n + 2].decode("utf-8", "surrogateescape") if paired else old
        n += 3 if paired else 2
        added, deleted = counts[c].split(b"\t")[:2]
        c += 3 if paired else 1  # a rename's numstat is "A\tD\t" NUL old NUL new
        binary = added == b"-"
        rows.append(NumstatRow(
            path=new, old_path=old, status=_STATUS.get(letter, "modified"),
            additions=0 if binary else int(added), deletions=0 if binary else int(deleted),
            binary=binary))
    return rows


def _among(path: str, paths: Sequence[str]) -> bool:
    """Whether `path` is one of `paths` or inside one of them (all of them when none)."""
    return not paths or any(path == p or path.startswith(p.rstrip("/") + "/") for p in paths)


def tracked(top: str, path: str) -> list[str]:
    """What git tracks at or under `path` of the working tree at `top` (its index), as
    paths from the top: `git ls-files -z`, exact."""
    out = _run(Path(top), "ls-files", "-z", "--", path)
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def _run(cwd: Path, *args: str, stdin: bytes | None = None,
         env: dict[str, str] | None = None) -> bytes:
    done = _call(cwd, *args, stdin=stdin, env=env)
    if done.returncode != 0:
        raise GitError(_said(done, args[0]))
    return done.stdout


def _said(done: subprocess.CompletedProcess[bytes], command: str) -> str:
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return said[-1] if said else f"git {command} exited {done.returncode}"


def _call(cwd: Path, *args: str, stdin: bytes | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """git's exit status as it is (some commands answer yes/no with 0/1); `env` adds to
    the pinned environment."""
    inherited = {k: v for k, v in os.environ.items() if k not in REPO_ENV}
    env = {**inherited, "LC_ALL": "C", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0",
           **(env or {})}
    git = shutil.which("git")
    if git is None:
        raise GitError("git is not installed (no `git` on PATH)")
    try:
        done = subprocess.run(  # noqa: S603 - a fixed git command line, never a shell
            [git, "--literal-pathspecs", *_PINNED, *args], cwd=cwd, input=stdin,
            capture_output=True, timeout=GIT_TIMEOUT_SECONDS, env=env, check=False)
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {GIT_TIMEOUT_SECONDS:.0f}s") from None
    return done
