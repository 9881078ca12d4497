"""`livereview check`: the configuration reaches every host, every repo exists, the model
endpoint answers, and the database is usable.

A check only reads: it opens the database only if it exists, read-only, and creates
nothing (no directory, no file, no identity row); it says what it found instead.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from livereview.app.hosts import connect
from livereview.core.model import JobState
from livereview.hosts.base import (
    AuthFailed,
    BadResponse,
    ExplainsAccess,
    Forbidden,
    Host,
    HostError,
    TLSFailed,
)
from livereview.hosts.local.git import tracked
from livereview.hosts.reactions import ack_reaction, offered
from livereview.jobs.llm import probe
from livereview.metrics import Metrics
from livereview.reachability import diagnose
from livereview.settings import AISettings, DaemonSettings, HostSettings, Settings
from livereview.store import jobs
from livereview.store.db import Store
from livereview.store.engine import StoreError, sqlite_file
from livereview.store.review_export import RepoBooks

IDENTITY_TIMEOUT_SECONDS = 15.0  # a host that accepts connections but never answers


@dataclass(frozen=True)
class Row:
    host: str
    subject: str  # "identity", a repo path, "listing", "database" or "endpoint"
    ok: bool
    detail: str


async def check(settings: Settings) -> list[Row]:
    rows = [database(settings.daemon), await endpoint(settings.ai)]
    metrics = Metrics()
    for index, host_settings in enumerate(settings.hosts):
        host = connect(host_settings, metrics, books=RepoBooks(tracked))
        try:
            rows += await _host(f"hosts[{index}] ({host_settings.name})", host, host_settings,
                                settings.repos_of(host_settings.name),
                                settings.bot.ack_reaction)
        finally:
            await host.close()
    return rows


# What a 403 on a repository means the bot's account lacks, in each host's own terms.
_REPO_ACCESS = {
    "gitlab": "at least the Reporter role in the project",
    "github": "read access to the repository (a fine-grained token must list it)",
    "bitbucket-cloud": "read access to the repository (a workspace member, or a token "
                       "of this repository or workspace)",
    "bitbucket-server": "REPO_READ on the repository (a project or repository permission)",
}


async def _host(where: str, host: Host, settings: HostSettings, repos: tuple[str, ...],
                configured_reaction: str | None) -> list[Row]:
    try:
        async with asyncio.timeout(IDENTITY_TIMEOUT_SECONDS):
            identity = await host.whoami()
    except AuthFailed:
        needs = {"gitlab": "the `api` scope",
                 "github": "pull requests + issues read/write and contents read",
                 "bitbucket-cloud": "pull requests read/write and repositories read (with "
                                    "login: an API token of that account; without: an "
                                    "access token)",
                 "bitbucket-server": "project read and repository write permissions"}
        return [Row(where, "identity", False, "token rejected (401): check the token and "
                    f"that it has {needs.get(settings.type, 'access')}")]
    except TLSFailed as exc:
        return [Row(where, "identity", False, str(exc))]
    except BadResponse as exc:
        return [Row(where, "identity", False, f"{settings.url} answered, but not as its API "
                    f"does ({exc}): is url the {settings.type} API base, not a login page "
                    "or a proxy?")]
    except (HostError, TimeoutError) as exc:
        return [Row(where, "identity", False, await _unreachable(settings, exc))]
    shown_id = f" (id {identity.user_id})" if identity.user_id else ""
    rows = [Row(where, "identity", True, f"@{identity.username}{shown_id}"),
            # Known once the identity is: some hosts learn it from the server (Bitbucket DC).
            Row(where, "acks", True, acks(host, configured_reaction))]
    for repo in repos:
        try:
            exists = await host.repo_exists(repo)
        except Forbidden:
            rows.append(Row(where, repo, False, "forbidden (403): the bot user needs "
                            + _REPO_ACCESS.get(settings.type, "read access to it")))
            continue
        except HostError as exc:
            rows.append(Row(where, repo, False, str(exc)))
            continue
        rows.append(Row(where, repo, exists, "ok" if exists else
                        "not a git working tree" if host.type == "local" else
                        "not found (404): wrong path, or the bot user is not a member"))
    if isinstance(host, ExplainsAccess):
        rows += [Row(where, n.subject, n.ok, n.detail) for n in host.access_notes()]
    rows.append(await _listing(where, host, repos))
    return rows


def acks(host: Host, configured: str | None) -> str:
    """What acknowledges a question on this host, checked against the reactions it offers
    (hosts/reactions.py) without posting anything. An unknown name is no error: the ack is
    then a comment, and the answer follows as ever."""
    if not host.capabilities.reactions:
        return "with a short reply: this host has no comment reactions"
    emoji, known = ack_reaction(host.type, configured), offered(host.type)
    if known.offers(emoji) is False:
        return (f"reaction {emoji!r} is not offered by {known.host} (it offers "
                f"{', '.join(known.names or ())}): the ack will be a short reply")
    note = f" ({known.note})" if known.note else ""
    return f"{emoji!r} as a reaction on the comment{note}"


async def _unreachable(settings: HostSettings, exc: Exception) -> str:
    """Name the host and the cause: DNS, refused, a silent firewall, or a slow server."""
    why = await diagnose(settings.url)
    if why is not None:
        return f"unreachable: {why}"
    what = str(exc) or f"no answer within {IDENTITY_TIMEOUT_SECONDS:g}s"
    return f"unreachable: {settings.url} accepts connections but {what}"


async def _listing(where: str, host: Host, repos: tuple[str, ...]) -> Row:
    """Try the listing once, so `auto` settles and the operator sees what it costs."""
    try:
        await host.list_changed_mrs(repos, datetime.now().astimezone())
    except HostError as exc:
        return Row(where, "listing", False, str(exc))
    if host.type == "local":
        return Row(where, "listing", True, "each repository's .livereview store, no requests")
    if host.listing_is_cheap:
        return Row(where, "listing", True, "instance-wide: one request per cycle for all repos")
    if host.capabilities.mention_inbox:
        return Row(where, "listing", True, f"per project: {len(repos)} requests, on the cold "
                   "cycle (mentions arrive through the to-do list in between)")
    if host.type == "bitbucket-server":  # no conditional requests there: one list per repo
        return Row(where, "listing", True, f"per repo: one request per cycle for each of "
                   f"{len(repos)} (open pull requests, newest first)")
    free = " (unchanged lists cost no rate limit)" if host.type == "github" else ""
    return Row(where, "listing", True, f"per repo: {len(repos)} × a few conditional requests "
               f"per cycle{free}")


async def endpoint(ai: AISettings) -> Row:
    trouble = await probe(ai)
    if trouble is not None:
        return Row("ai", "endpoint", False, trouble)
    return Row("ai", "endpoint", True, f"{ai.base_url} answers (model {ai.model})")


def database(daemon: DaemonSettings) -> Row:
    """What is in the database, read-only; or whether the first run can create it."""
    path = sqlite_file(daemon.database_url)
    if path is not None and not path.exists():
        return _not_created(path)
    try:
        store = Store.open_existing(daemon.database_url, daemon.busy_timeout_seconds)
    except StoreError as exc:
        return Row("daemon", "database", False, str(exc))
    try:
        counts = store.transaction(jobs.counts)
    except StoreError as exc:
        return Row("daemon", "database", False, str(exc))
    finally:
        store.close()
    waiting = sum(counts.get(s.value, 0) for s in JobState if s.open)
    failed = counts.get(JobState.FAILED.value, 0)
    return Row("daemon", "database", True, f"{path or 'database'}: {sum(counts.values())} "
               f"reply jobs, {waiting} waiting, {failed} failed")


def _not_created(path: Path) -> Row:
    """The nearest existing directory decides whether the first run can create it."""
    parent = next(p for p in path.absolute().parents if p.exists())
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        return Row("daemon", "database", False, f"{path} does not exist and cannot be "
                   f"created: {parent} is not a writable directory")
    return Row("daemon", "database", True, f"{path} does not exist yet: the first `once` or "
               "`run` creates it (mode 0600, in a 0700 directory)")


def render(rows: list[Row]) -> str:
    width = max((len(r.host) for r in rows), default=5)
    subject_width = max((len(r.subject) for r in rows), default=4)
    lines = [f"{'where':<{width}}  {'what':<{subject_width}}  status"]
    lines += [f"{r.host:<{width}}  {r.subject:<{subject_width}}  "
              f"{'ok  ' if r.ok else 'FAIL'}  {r.detail}" for r in rows]
    return "\n".join(lines)
