"""`livereview check`: the configuration reaches every host, and every repo exists."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from livereview.hosts.base import AuthFailed, Forbidden, Host, HostError, TLSFailed
from livereview.hosts.connect import connect
from livereview.metrics import Metrics
from livereview.settings import Settings
from livereview.store import state
from livereview.store.db import Store


@dataclass(frozen=True)
class Row:
    host: str
    subject: str  # "identity" or a repo path
    ok: bool
    detail: str


async def check(settings: Settings, store: Store) -> list[Row]:
    rows: list[Row] = []
    metrics = Metrics()
    for index, host_settings in enumerate(settings.hosts):
        host = connect(host_settings, metrics)
        where = f"hosts[{index}] ({host_settings.name})"
        try:
            identity = await host.whoami()
        except AuthFailed:
            needs = {"gitlab": "the `api` scope",
                     "github": "pull requests + issues read/write and contents read"}
            rows.append(Row(where, "identity", False, "token rejected (401): check the token "
                            f"and that it has {needs.get(host_settings.type, 'access')}"))
            await host.close()
            continue
        except TLSFailed as exc:
            rows.append(Row(where, "identity", False, str(exc)))
            await host.close()
            continue
        except HostError as exc:
            rows.append(Row(where, "identity", False, f"unreachable: {exc}"))
            await host.close()
            continue
        await store.run(state.save_identity, identity, datetime.now().astimezone())
        rows.append(Row(where, "identity", True, f"@{identity.username} (id {identity.user_id})"))
        for repo in settings.repos_of(host_settings.name):
            try:
                exists = await host.repo_exists(repo)
            except Forbidden:
                rows.append(Row(where, repo, False, "forbidden (403): the bot user needs at "
                                "least Reporter access"))
                continue
            except HostError as exc:
                rows.append(Row(where, repo, False, str(exc)))
                continue
            rows.append(Row(where, repo, exists, "ok" if exists else
                            "not found (404): wrong path, or the bot user is not a member"))
        rows.append(await _listing(where, host, settings.repos_of(host_settings.name)))
        await host.close()
    return rows


async def _listing(where: str, host: Host, repos: tuple[str, ...]) -> Row:
    """Try the listing once, so `auto` settles and the operator sees what it costs."""
    try:
        await host.list_changed_mrs(repos, datetime.now().astimezone())
    except HostError as exc:
        return Row(where, "listing", False, str(exc))
    if host.listing_is_cheap:
        return Row(where, "listing", True, "instance-wide: one request per cycle for all repos")
    if host.capabilities.mention_inbox:
        return Row(where, "listing", True, f"per project: {len(repos)} requests, on the cold "
                   "cycle (mentions arrive through the to-do list in between)")
    return Row(where, "listing", True, f"per repo: {len(repos)} × a few conditional requests "
               "per cycle (unchanged lists cost no rate limit)")


def render(rows: list[Row]) -> str:
    width = max((len(r.host) for r in rows), default=4)
    subject_width = max((len(r.subject) for r in rows), default=4)
    lines = [f"{'host':<{width}}  {'what':<{subject_width}}  status"]
    lines += [f"{r.host:<{width}}  {r.subject:<{subject_width}}  "
              f"{'ok  ' if r.ok else 'FAIL'}  {r.detail}" for r in rows]
    return "\n".join(lines)
