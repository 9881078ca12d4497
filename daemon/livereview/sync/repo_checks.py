"""Whether each watched repository can be read (docs/DESIGN.md §6): one wrong path or one
revoked permission must not stop a host's listing, so a repo found unusable is set aside
and checked again on every cold cycle."""

from __future__ import annotations

import asyncio

import structlog

from livereview.hosts.base import AuthFailed, Forbidden, Host, HostError

log = structlog.get_logger("livereview.poller")


async def check(host: Host, repos: tuple[str, ...], unhealthy: dict[str, str]) -> None:
    """Check `repos` and record in `unhealthy` (repo → reason) those that do not exist or
    may not be read; a repo that could not be checked keeps its last verdict."""
    # All at once (the host's client bounds the requests in flight): one after the
    # other, 200 repos at 50 ms held the first sight up for 10 s.
    verdicts = await asyncio.gather(*(_check(host, repo) for repo in repos))
    for repo, (checked, reason) in zip(repos, verdicts, strict=True):
        if not checked:
            continue
        if reason is None:
            if unhealthy.pop(repo, None) is not None:
                log.info("repo_recovered", host=host.name, repo=repo)
        elif repo not in unhealthy:
            log.error("repo_unhealthy", host=host.name, repo=repo, reason=reason)
            unhealthy[repo] = reason


async def _check(host: Host, repo: str) -> tuple[bool, str | None]:
    """(whether it could be checked, why it is unusable or None)."""
    try:
        return True, None if await host.repo_exists(repo) else "not found"
    except (AuthFailed, Forbidden) as exc:
        return True, str(exc)
    except HostError as exc:  # unreachable right now: keep the last verdict
        log.warning("repo_check_failed", host=host.name, repo=repo, error=str(exc))
        return False, None
