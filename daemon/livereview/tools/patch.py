"""One file of an MR's diff as `git apply` reads it: the host's hunks under git's headers.

Every host yields a file's hunks alone (hosts/diffs.py `hunks`); printed one after another
they are no patch at all, since nothing says which file a hunk belongs to. Here each file
gets the headers git itself writes (git's Documentation/diff-generate-patch.txt):
`diff --git a/OLD b/NEW`, then `new file mode`/`deleted file mode` or `rename from`/
`rename to`, then `--- a/OLD` (or /dev/null) and `+++ b/NEW` (or /dev/null) when there are
hunks. Names are quoted as git quotes them (quote.c, quote_c_style): a hostile name with
a line break can neither end its header nor forge another file's.
"""

from __future__ import annotations

from livereview.hosts.diffs import hunks
from livereview.tools import results

# The hosts' diff listings carry no file mode (GitHub's files API has none): a created or
# deleted file is stated as a regular file, which `git apply` requires to be named.
REGULAR_FILE = "100644"
_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f",
            0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}


def quoted(prefix: str, path: str) -> str:
    """`prefix + path` as git writes a name in a patch: as is when plain; else in double
    quotes, with C escapes and every other control or non-ASCII byte in octal."""
    raw = (prefix + path).encode("utf-8", "surrogatepass")
    if all(0x20 <= byte < 0x7F and byte not in _ESCAPES for byte in raw):
        return prefix + path
    return '"' + "".join(_ESCAPES.get(byte) or (
        chr(byte) if 0x20 <= byte < 0x7F else f"\\{byte:03o}") for byte in raw) + '"'


def as_patch(item: results.FileDiff) -> str:
    """The file's part of a patch; a file whose diff was left out is one `#` line naming
    why, which `git apply` passes over as it does any text between files."""
    old, new = item.old_path or item.path, item.path
    body = hunks(item.diff)
    added, removed = item.status == "added", item.status == "removed"
    if item.note or (not body and not (added or removed or old != new)):
        return f"# {quoted('', new)}: {item.note or 'no change to its text'}\n"
    if added:
        old = new
    header = [f"diff --git {quoted('a/', old)} {quoted('b/', new)}"]
    if added:
        header.append(f"new file mode {REGULAR_FILE}")
    elif removed:
        header.append(f"deleted file mode {REGULAR_FILE}")
    elif old != new:
        header += [f"rename from {quoted('', old)}", f"rename to {quoted('', new)}"]
    if body:
        header += ["--- " + ("/dev/null" if added else quoted("a/", old)),
                   "+++ " + ("/dev/null" if removed else quoted("b/", new))]
    return "\n".join(header) + "\n" + body + ("" if not body or body.endswith("\n") else "\n")
