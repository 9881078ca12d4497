"""The fake Bitbucket Data Center's review reads: a pull request's changed files
(`/changes`, paged) and one file's diff as JSON (`/diff/{path}`), as Bitbucket answers them.

Shapes: https://developer.atlassian.com/server/bitbucket/rest/v906/api-group-pull-requests/
#api-api-latest-projects-projectkey-repos-repositoryslug-pull-requests-pullrequestid-changes-get
(RestChange: contentId, path {components, name, toString, …}, srcPath for a move, type
ADD | MODIFY | DELETE | MOVE | COPY, nodeType FILE) and …-pull-requests-pullrequestid-diff-path-get
(RestDiff: fromHash, toHash, diffs [{source, destination, binary, hunks [{sourceLine,
sourceSpan, destinationLine, destinationSpan, segments [{type ADDED | REMOVED | CONTEXT,
lines [{source, destination, line}]}]}]}]).
"""

from __future__ import annotations

import difflib
import hashlib
import re
from typing import Any

from livereview.sandbox.bitbucket_server.model import JSON, PullRequest, no_such
from livereview.sandbox.bitbucket_server.payloads import page

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SEGMENT = {"+": "ADDED", "-": "REMOVED", " ": "CONTEXT"}


def _path(path: str) -> JSON:
    name = path.rsplit("/", 1)[-1]
    parent = path[:-len(name)].rstrip("/")
    return {"components": path.split("/"), "parent": parent, "name": name,
            "extension": name.rsplit(".", 1)[-1] if "." in name else "", "toString": path}


def _trees(pr: PullRequest) -> tuple[dict[str, str], dict[str, str]]:
    return pr.repo.commits[pr.base_sha].tree, pr.repo.commits[pr.head_sha].tree


def changes(pr: PullRequest, query: dict[str, str]) -> JSON:
    old, new = _trees(pr)
    values = []
    for path in sorted(set(old) | set(new)):
        if old.get(path) == new.get(path):
            continue
        kind = "ADD" if path not in old else "DELETE" if path not in new else "MODIFY"
        content = hashlib.sha1(new.get(path, "").encode(), usedforsecurity=False).hexdigest()
        values.append({"contentId": content, "fromContentId": "0" * 40, "path": _path(path),
                       "executable": False, "percentUnchanged": -1, "type": kind,
                       "nodeType": "FILE", "srcExecutable": False,
                       "properties": {"gitChangeType": kind}})
    out = page(values, query, 25, 1000)
    out.update(fromHash=pr.base_sha, toHash=pr.head_sha)
    return out


def _hunks(before: str, after: str, context: int) -> list[JSON]:
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), n=context,
                                      lineterm=""))[2:]
    hunks: list[JSON] = []
    old = new = 0
    for text in lines:
        if m := _HUNK.match(text):
            old, new = int(m[1]), int(m[3])
            hunks.append({"sourceLine": old, "sourceSpan": int(m[2] or 1),
                          "destinationLine": new, "destinationSpan": int(m[4] or 1),
                          "segments": [], "truncated": False})
            continue
        kind = _SEGMENT[text[:1]]
        segments: list[JSON] = hunks[-1]["segments"]
        if not segments or segments[-1]["type"] != kind:
            segments.append({"type": kind, "lines": [], "truncated": False})
        segments[-1]["lines"].append({"source": old, "destination": new, "line": text[1:],
                                      "truncated": False})
        old += kind != "ADDED"
        new += kind != "REMOVED"
    return hunks


def file_diff(pr: PullRequest, path: str, query: dict[str, Any]) -> JSON:
    old, new = _trees(pr)
    if path not in old and path not in new:
        raise no_such("content.NoSuchPathException", f"The path \"{path}\" does not exist.")
    before, after = old.get(path), new.get(path)
    diff: JSON = {"source": _path(path) if before is not None else None,
                  "destination": _path(path) if after is not None else None,
                  "truncated": False}
    if "\0" in (before or "") or "\0" in (after or ""):
        diff["binary"] = True
    elif before != after:
        diff["hunks"] = _hunks(before or "", after or "", int(query.get("contextLines") or 10))
    return {"fromHash": pr.base_sha, "toHash": pr.head_sha,
            "contextLines": int(query.get("contextLines") or 10), "whitespace": "SHOW",
            "diffs": [diff] if before != after else [], "truncated": False}
