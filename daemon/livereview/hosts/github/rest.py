"""Where the GitHub adapter's parts send their REST requests: a repository's and a pull
request's path, and every item of a paged list, each page revalidated with its ETag (a
304 costs no rate limit: https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate).

Docs: https://docs.github.com/en/rest/repos/repos#get-a-repository,
https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from livereview.core.model import MRKey
from livereview.hosts.base import NotFound
from livereview.hosts.http import HttpClient
from livereview.hosts.payload import JsonObject


def repo_path(repo: str) -> str:
    """`/repos/{owner}/{name}`, each part quoted; anything but owner/name is no repo."""
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        raise NotFound(f"{repo}: a GitHub repository is owner/name")
    return f"/repos/{quote(owner, safe='')}/{quote(name, safe='')}"


def pull_path(key: MRKey) -> str:
    return f"{repo_path(key.repo)}/pulls/{key.iid}"


async def every_item(http: HttpClient, path: str, params: Mapping[str, str] | None = None
                     ) -> list[JsonObject]:
    """Every item of a paged list, each page asked for conditionally."""
    return [x async for page in http.items(path, params, conditional=True) for x in page]
