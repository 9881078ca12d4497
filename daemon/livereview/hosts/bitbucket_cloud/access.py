"""What a Bitbucket Cloud credential is and what it may do, from the headers every answer
carries: `X-Credential-Type` (repo_access_token, project_access_token,
workspace_access_token, api_token, …) and `X-OAuth-Scopes`.
https://support.atlassian.com/bitbucket-cloud/kb/how-to-fetch-the-scope-of-a-token-via-command-line/

Access tokens and app passwords carry the classic scope names, where a write scope implies
its read scope and `pullrequest` implies `repository`
(https://developer.atlassian.com/cloud/bitbucket/bitbucket-cloud-rest-api-scopes/); API
tokens carry `read:…:bitbucket` / `write:…:bitbucket` scopes, none implying another
(https://support.atlassian.com/bitbucket-cloud/docs/api-token-permissions/).
"""

from __future__ import annotations

from dataclasses import dataclass

from livereview.hosts.base import AccessNote

KINDS = {"repo_access_token": "repository access token",
         "project_access_token": "project access token",
         "workspace_access_token": "workspace access token",
         "api_token": "API token", "app_password": "app password"}
_IMPLIES = {"pullrequest:write": ("pullrequest", "repository:write"),
            "pullrequest": ("repository",), "repository:write": ("repository",),
            "repository:admin": ("repository",)}
# What the bot does → (classic scope, API-token scope, the permission's name in the UI).
NEEDS = (("read pull requests and their comments", "pullrequest", "read:pullrequest:bitbucket",
          "Pull requests: Read"),
         ("answer, acknowledge and approve", "pullrequest:write", "write:pullrequest:bitbucket",
          "Pull requests: Write"),
         ("read the code (diffs, files)", "repository", "read:repository:bitbucket",
          "Repositories: Read"))


@dataclass(frozen=True)
class Credential:
    kind: str  # X-Credential-Type, "" when the host did not say
    scopes: frozenset[str]
    reported: bool  # the host sent X-OAuth-Scopes

    @classmethod
    def from_headers(cls, kind: str, scopes: str | None) -> Credential:
        found = {s.strip() for s in (scopes or "").split(",") if s.strip()}
        todo = list(found)
        while todo:  # implied scopes imply further ones
            implied = set(_IMPLIES.get(todo.pop(), ())) - found
            found |= implied
            todo += implied
        return cls(kind.strip(), frozenset(found), scopes is not None)

    @property
    def access_token(self) -> bool:
        return self.kind.endswith("_access_token")


def quota(limit: int | None, per_hour: float) -> AccessNote:
    said = "reported by X-RateLimit-Limit" if limit else "the documented base quota"
    return AccessNote("quota", True, f"{limit or 1000} requests/hour ({said}); the daemon "
                      f"spends at most {per_hour:.0f}, listing repos only with what reading "
                      "and answering leave")


def notes(credential: Credential | None, *, login: str | None, bot: str) -> list[AccessNote]:
    """The `token` and `may` rows of `check`."""
    if credential is None:
        return [AccessNote("token", True, "kind not reported (no answer carried "
                           "X-Credential-Type)")]
    kind = KINDS.get(credential.kind, credential.kind or "a credential of unreported kind")
    how = f"Basic auth as {login}" if login else "Bearer"
    who = (f"posts as its own bot user {bot!r}" if credential.access_token
           else f"posts as {bot!r}")
    rows = [AccessNote("token", True, f"{kind} ({how}), {who}")]
    if not credential.reported:
        return rows
    can = [what for what, classic, scoped, _ in NEEDS
           if classic in credential.scopes or scoped in credential.scopes]
    missing = [f"{what} (needs {ui})" for what, classic, scoped, ui in NEEDS
               if classic not in credential.scopes and scoped not in credential.scopes]
    scopes = ", ".join(sorted(credential.scopes)) or "none"
    if missing:
        return [*rows, AccessNote("may", False, f"cannot {'; cannot '.join(missing)} "
                                  f"— scopes: {scopes}")]
    return [*rows, AccessNote("may", True, f"{', '.join(can)} — scopes: {scopes}")]
