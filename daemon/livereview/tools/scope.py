"""Which repositories the agent tools reach (docs/DESIGN.md §13, "Reach").

A host's token usually reaches far more than the repos the operator listed; an agent's
`livereview mr …` or MCP call reaches only the host's watched `[[repos]]` and what its
`agent_repos` patterns match. The check runs on the repo path as the host will resolve it,
before any request:

- percent escapes are decoded once (`group%2Fsecret` is `group/secret`); what still holds a
  `%` after that, a `.` or `..` segment, an empty one (`a//b`) or a character no host allows
  in a path is refused, never cleaned into something else;
- a path has the segments its host gives it: `owner/repo` on GitHub and Bitbucket, a
  namespace and a project on GitLab, whose API also takes a bare project id (`42`: all
  digits is an id, lib/api/helpers.rb `find_project`), which no pattern should reach;
- ASCII case is ignored on the hosts that ignore it: GitLab finds a project whatever the
  case of its path (app/models/concerns/routable.rb, `find_by_full_path`: an exact match,
  then a case-insensitive one; paths are unique ignoring case, the `LOWER(path)` index),
  GitHub's owner and repo names are case-insensitive, and Bitbucket's repo slugs are lower
  case. Non-ASCII letters are refused, so no Unicode folding (Kelvin sign, long s) applies.

A watched repo is named as the configuration spells it, so the store's rows (replies, jobs)
of `Group/App` are found when an agent writes `group/app`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import unquote

from livereview.core.model import MRKey
from livereview.settings.repo_globs import RepoPattern
from livereview.tools.errors import BadInput, OutOfReach

if TYPE_CHECKING:
    from livereview.settings.view import HostView, ToolSettings

_NAME = re.compile(r"[A-Za-z0-9._~-]+")  # GitLab, GitHub and Bitbucket path characters
MAX_SEGMENTS = 32  # GitLab nests groups 20 deep; the other hosts have 2 segments
SEGMENTS = {"gitlab": (2, MAX_SEGMENTS), "github": (2, 2), "bitbucket-cloud": (2, 2),
            "bitbucket-server": (2, 2)}


def _ascii_lower(text: str) -> str:
    return "".join(c.lower() if c.isascii() else c for c in text)


def canonical_path(host_type: str, repo: str) -> str:
    """The repo path a host resolves `repo` to, or BadInput naming what is wrong with it."""
    path = repo
    if host_type in SEGMENTS and "%" in repo:  # a local path's % is a file name's
        try:
            path = unquote(repo, errors="strict")
        except UnicodeDecodeError:
            raise BadInput(f"repo {repo!r}: a percent escape that is not UTF-8") from None
    path = path.strip("/")
    segments = path.split("/")
    low, high = SEGMENTS.get(host_type, (1, MAX_SEGMENTS * 8))  # local: a directory path
    for segment in segments:
        if segment in ("", ".", ".."):
            raise BadInput(f"repo {repo!r}: no empty, . or .. path segments")
        if host_type in SEGMENTS and not _NAME.fullmatch(segment):
            raise BadInput(f"repo {repo!r}: expected letters, digits, '.', '_', '-' or '~' "
                           "in each path segment")
        if not segment.isprintable():
            raise BadInput(f"repo {repo!r}: a path segment holds a control character")
    if not low <= len(segments) <= high:
        raise BadInput(f"repo {repo!r}: a {host_type} repo path has "
                       + (f"{low} segments" if low == high else f"{low} to {high} segments")
                       + f" ({'owner/repo' if high == 2 else 'group/project'})")
    return path


@dataclass(frozen=True)
class _HostReach:
    host: HostView
    watched: dict[str, str]  # folded path → the path as configured
    patterns: tuple[RepoPattern, ...]

    @property
    def fold(self) -> bool:
        return self.host.type in SEGMENTS  # a local host's paths are the file system's

    def key(self, key: MRKey) -> MRKey:
        path = canonical_path(self.host.type, key.repo)
        watched = self.watched.get(_ascii_lower(path) if self.fold else path)
        if watched is not None:
            return MRKey(key.host, watched, key.iid)
        if any(p.matches(path) for p in self.patterns):
            return MRKey(key.host, path, key.iid)
        raise OutOfReach(
            f"{key.host}:{path}!{key.iid}: the agent tools do not reach repo {path!r} on host "
            f"{key.host!r}: only its watched [[repos]] and what its agent_repos patterns "
            "match (add the repo, or a pattern for it, to agent_repos in that [[hosts]] entry)")


@dataclass(frozen=True)
class Reach:
    """Every configured host's reach, compiled once per toolbox."""

    hosts: dict[str, _HostReach]

    @classmethod
    def of(cls, settings: ToolSettings) -> Reach:
        reaches: dict[str, _HostReach] = {}
        for host in settings.hosts:
            fold = host.type in SEGMENTS
            watched = {(_ascii_lower(p) if fold else p): p for p in settings.repos_of(host.name)}
            patterns = tuple(RepoPattern.of(p, fold=fold) for p in host.agent_repos)
            reaches[host.name] = _HostReach(host, watched, patterns)
        return cls(reaches)

    def key(self, key: MRKey) -> MRKey:
        """`key` with its repo as the host resolves it (a watched repo as configured), or
        OutOfReach naming the setting that would allow it."""
        reach = self.hosts.get(key.host)
        if reach is None:
            raise BadInput(f"{key}: no configured host named {key.host!r}")
        return reach.key(key)
