"""A repository's own `.livereview/` folder, checked before anything in it is opened: a
repository cannot make livereview write outside it (docs/DESIGN.md §14, "The store folder").

A clone is someone else's content. Its `.livereview` may be a symlink to a folder elsewhere;
its `livereview.db`, `review.json` or SQLite's side files may be symlinks (SQLite and the
export would write through them, outside the clone) or tracked by git (a store shipped with
the code, whose threads nobody here wrote). The folder is used only when it is a real
directory of the working tree, nothing in it is tracked, and each file livereview or SQLite
opens there is absent or a regular file with one link. Files are then created relative to
the folder's own descriptor with O_NOFOLLOW (and O_EXCL for temporaries), so a symlink put
there later is never followed either; SQLite's own opens of the database and its -wal/-shm
follow the check (the sqlite3 module cannot pass SQLITE_OPEN_NOFOLLOW).

Writers are serialised by `WriteLock`: an exclusive `flock` on `write.lock` in the folder
(and AI runners by one on `runner.lock`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from livereview.core.local_model import DATABASE_NAME, STATE_DIR, UnsafeStore

EXPORT_NAME = "review.json"
LOCK_NAME = "write.lock"  # one writer at a time (store/local_lock.py)
RUNNER_LOCK_NAME = "runner.lock"  # one in-process AI runner at a time (local_respond.py)
# Every name livereview or SQLite opens in the folder (SQLite: the database, its WAL, its
# shared-memory index, a rollback journal: https://www.sqlite.org/tempfiles.html §2.1-2.3).
STORE_FILES = (DATABASE_NAME, f"{DATABASE_NAME}-wal", f"{DATABASE_NAME}-shm",
               f"{DATABASE_NAME}-journal", EXPORT_NAME, LOCK_NAME, RUNNER_LOCK_NAME)
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC

Tracked = Callable[[str, str], list[str]]  # (top, path): what git tracks at or under path


def checked_folder(top: str, tracked: Tracked) -> Path:
    """The repository's `.livereview/`, created (0700) if missing, with its database file
    (0600); `UnsafeStore` and nothing created when the folder is not the clone's own."""
    root = Path(top).resolve()
    folder = root / STATE_DIR
    try:
        found = os.lstat(folder)
    except FileNotFoundError:
        found = None
    if found is not None:
        _refuse_entry(folder, found, want_dir=True)
    shipped = tracked(str(root), STATE_DIR)
    if shipped:
        raise UnsafeStore(f"{root / shipped[0]} is tracked by git: a review store shipped with "
                          f"the repository is not this clone's own (remove it with `git rm "
                          f"--cached -r {STATE_DIR}` and commit, or review in another clone)")
    if found is None:
        with contextlib.suppress(FileExistsError):  # made meanwhile: checked below
            folder.mkdir(mode=0o700)
    with opened(folder) as fd:
        for name in STORE_FILES:
            try:
                entry = os.lstat(name, dir_fd=fd)
            except FileNotFoundError:
                continue
            _refuse_entry(folder / name, entry, want_dir=False)
        os.close(os.open(DATABASE_NAME, _NEW_FILE, 0o600, dir_fd=fd))
    return folder


def _refuse_entry(path: Path, entry: os.stat_result, *, want_dir: bool) -> None:
    if stat.S_ISLNK(entry.st_mode):
        raise UnsafeStore(f"{path} is a symlink (to {_target(path)}): livereview writes its "
                          "review store only inside the repository; remove the link")
    if want_dir and not stat.S_ISDIR(entry.st_mode):
        raise UnsafeStore(f"{path} is not a directory: livereview keeps its review store "
                          "there; move it aside")
    if not want_dir and not stat.S_ISREG(entry.st_mode):
        raise UnsafeStore(f"{path} is not a regular file: move it aside")
    if not want_dir and entry.st_nlink > 1:
        raise UnsafeStore(f"{path} has {entry.st_nlink} hard links (another name elsewhere "
                          "would change with it): move it aside")


def _target(path: Path) -> str:
    try:
        return repr(os.readlink(path))
    except OSError:
        return "?"


@contextlib.contextmanager
def opened(folder: Path) -> Iterator[int]:
    """The folder's descriptor, never through a symlink (UnsafeStore if it became one)."""
    try:
        fd = os.open(folder, _DIRECTORY)
    except OSError:
        if os.path.islink(folder):
            raise UnsafeStore(f"{folder} is a symlink: livereview writes its review store "
                              "only inside the repository; remove the link") from None
        raise
    try:
        yield fd
    finally:
        os.close(fd)


def write_atomically(folder: Path, name: str, text: str) -> Path:
    """`name` in the folder replaced by `text` at once (a private temporary file, then a
    rename within the folder): a reader sees the old file or the new one, never half."""
    with opened(folder) as fd:
        temporary = f".{name}.{secrets.token_hex(8)}"
        handle = os.open(temporary, _NEW_FILE | os.O_EXCL, 0o600, dir_fd=fd)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=fd)
            raise
    return folder / name


def open_lock_file(folder: Path, name: str) -> int:
    """A lock file in the folder, opened read-write (created 0600), never through a link."""
    with opened(folder) as fd:
        try:
            handle = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                             0o600, dir_fd=fd)
        except OSError as exc:
            raise UnsafeStore(f"{folder / name}: cannot open it ({exc.strerror}); "
                              "a symlink there is refused: remove it") from None
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        os.close(handle)
        raise UnsafeStore(f"{folder / name} is not a regular file: move it aside")
    return handle
