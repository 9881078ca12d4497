"""`livereview conversation <MR URL>`: the normalized graph of one MR, from the store
(read by tools/status.py).

Threads with anchors, messages with who wrote them, reactions, the events derived by
polling and the reply jobs with their states — as a tree, or as JSON for scripts.
"""

from __future__ import annotations

from typing import Any

from livereview.core.model import Identity, Message, MRKey, Thread
from livereview.core.sanitize import clean
from livereview.settings import Settings
from livereview.tools import target
from livereview.tools.errors import BadInput
from livereview.tools.status import Graph, UnknownMR


def parse_url(settings: Settings, url: str) -> MRKey:
    """The MR a web URL (any configured host's) or `HOST:REPO!IID` names: the agent tools'
    reading (tools/target.py), so every command takes the same references."""
    try:
        return target.parse_mr(settings.hosts, url)
    except BadInput as exc:
        raise UnknownMR(str(exc)) from None


def _actor(message: Message, identity: Identity | None) -> str:
    if message.system:
        return "system"
    return "bot (self)" if identity and identity.is_me(message.author) else "human"


def _where(thread: Thread) -> str:
    if thread.anchor is None:
        return "general comment" if thread.individual else "general thread"
    state_text = " (resolved)" if thread.resolved else ""
    return f"on {thread.anchor.new_path}:{thread.anchor.line}{state_text}"


def _excerpt(text: str, width: int = 72) -> str:
    one_line = " ".join(clean(text).split())
    return one_line if len(one_line) <= width else one_line[: width - 1] + "…"


def as_dict(graph: Graph) -> dict[str, Any]:
    mr = graph.snapshot.mr
    return {
        "mr": {"host": mr.key.host, "repo": mr.key.repo, "iid": mr.key.iid, "title": mr.title,
               "state": mr.state, "author": mr.author.username, "head_sha": mr.head_sha,
               "source_branch": mr.source_branch, "target_branch": mr.target_branch},
        "threads": [{
            "id": t.id, "where": _where(t), "resolved": t.resolved,
            "anchor": None if t.anchor is None else {
                "path": t.anchor.new_path, "new_line": t.anchor.new_line,
                "old_line": t.anchor.old_line, "head_sha": t.anchor.head_sha},
            "messages": [{
                "id": m.id, "author": m.author.username, "actor": _actor(m, graph.identity),
                "created_at": m.created_at.isoformat(), "body": m.body,
                "reactions": graph.reactions(m),
            } for m in t.messages],
        } for t in graph.snapshot.threads],
        # null: not read yet (an MR stored at first sight without a job), not "no commits"
        "commits": None if graph.snapshot.commits is None else [
            {"sha": c.sha, "title": c.title, "message": c.message, "author": c.author,
             "created_at": c.created_at.isoformat()} for c in graph.snapshot.commits],
        "events": [{"kind": e.kind, "thread_id": e.host_thread_id,
                    "message_id": e.host_message_id, "detail": e.detail,
                    "at": e.created_at.isoformat()} for e in graph.events],
        "jobs": [{"key": j.key, "state": j.state, "reason": j.reason, "attempts": j.attempts,
                  "last_error": j.last_error, "message_id": j.host_message_id,
                  "posted_message_id": j.posted_message_id} for j in graph.jobs],
    }


def render(graph: Graph) -> str:
    mr = graph.snapshot.mr
    lines = [f"{mr.key.repo}!{mr.key.iid} “{_excerpt(mr.title, 60)}” ({mr.state}) by "
             f"@{mr.author.username}, {mr.source_branch} → {mr.target_branch}, "
             f"head {mr.head_sha[:8]}"]
    for t_index, thread in enumerate(graph.snapshot.threads):
        last_thread = t_index == len(graph.snapshot.threads) - 1
        lines.append(f"{'└' if last_thread else '├'}─ thread {thread.id[:8]} {_where(thread)}")
        for m_index, m in enumerate(thread.messages):
            stem = "   " if last_thread else "│  "
            branch = "└" if m_index == len(thread.messages) - 1 else "├"
            reactions = "".join(f" [{r['name']} @{r['user']}"
                                + (", per its reply job]" if "source" in r else "]")
                                for r in graph.reactions(m))
            lines.append(f"{stem}{branch}─ #{m.id} @{m.author.username} "
                         f"({_actor(m, graph.identity)}) “{_excerpt(m.body)}”{reactions}")
    if graph.events:
        lines.append("events (newest last):")
        lines += [f"  {e.created_at:%Y-%m-%d %H:%M:%S} {e.kind:<16} "
                  f"{e.host_message_id or e.host_thread_id or ''} {e.detail}".rstrip()
                  for e in graph.events]
    lines.append("reply jobs:" if graph.jobs else "reply jobs: none")
    lines += [f"  {j.state:<9} #{j.host_message_id} ({j.reason}) attempts={j.attempts}"
              + (f" → #{j.posted_message_id}" if j.posted_message_id else "")
              + (f"  ({j.last_error})" if j.last_error else "") for j in graph.jobs]
    return "\n".join(lines)
