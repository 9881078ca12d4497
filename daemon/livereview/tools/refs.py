r"""What `file --ref` names: the MR's head or base, a commit SHA, or a branch or tag name.

A branch or tag name is checked against git's own rules before it goes into a URL
(git-check-ref-format(1)): no `..`, `@{`, control characters, spaces or any of `~^:?*[\`,
no segment starting with `.` or ending with `.lock`, not starting with `-` or `/`, not
ending with `/` or `.`. The host resolves it; a name it does not know is its 404.
"""

from __future__ import annotations

import re

from livereview.core.sanitize import one_line
from livereview.tools.errors import BadInput

_HEX = re.compile(r"[0-9a-fA-F]{7,64}")
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")
MAX_REF = 255  # git allows longer; no host's branch page does


def is_sha(ref: str) -> bool:
    return bool(_HEX.fullmatch(ref))


def check_name(ref: str) -> str:
    """`ref` if git would take it as a branch or tag name, else BadInput naming it."""
    bad = (not ref or len(ref) > MAX_REF or _FORBIDDEN.search(ref) is not None
           or ref.startswith(("-", "/")) or ref.endswith(("/", ".")) or ref == "@"
           or any(s.startswith(".") or s.endswith(".lock") for s in ref.split("/"))
           or not ref.isprintable())
    if bad:
        raise BadInput(f"--ref {one_line(ref)}: expected head, base, a commit SHA, or a "
                       "branch or tag name as git allows them")
    return ref
