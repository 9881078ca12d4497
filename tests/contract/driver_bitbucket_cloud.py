"""The contract driver for Bitbucket Cloud: the fake on loopback, the real adapter connected
to it as the daemon does — with an account's API token (Basic auth with its login) or, with
`access_token`, a workspace access token acting as its own bot user (Bearer)."""

from __future__ import annotations

from typing import ClassVar

from livereview.app.hosts import connect
from livereview.core.model import Thread
from livereview.hosts.base import Host
from livereview.hosts.http import HttpClient
from livereview.metrics import Metrics
from livereview.sandbox.bitbucket_cloud.server import FakeBitbucketCloudServer
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.settings import HostSettings, Secret
from tests.contract.drivers import FAST, NEW, OLD, PATH, REPO, TOKEN, Clock


class BitbucketCloudDriver:
    _PATHS: ClassVar[dict[str, tuple[str, str]]] = {
        "fetch": ("GET", r"/pullrequests/\d+$"),
        "reply": ("POST", r"/pullrequests/\d+/comments$"),
        "react": ("POST", r"/pullrequests/\d+/comments$")}  # no reactions: its ack is a reply

    def __init__(self, *, access_token: bool = False) -> None:
        self.name, self.repo, self.bot = "bb", REPO, "livereview"
        self.clock = Clock()
        self.access_token = access_token
        self.fake = FakeBitbucketCloud(token="unused-api-token", bot_login="token-owner",
                                       clock=self.clock)
        if access_token:
            self.fake.add_access_token(TOKEN, self.bot)
        else:
            self.fake.add_user(self.bot, "LiveReview")
            self.fake.add_api_token(self.bot, TOKEN)
        self.fake.add_user("alice", "Alice")
        self.fake.add_user("bob", "Bob")
        self.fake.add_repo(REPO)
        self.server = FakeBitbucketCloudServer(self.fake).start()
        self.host = self.host_with_token(TOKEN)

    def open_mr(self, title: str) -> int:
        return self.fake.add_pr(REPO, title=title, description=f"About {title}.", author="bob",
                                files={PATH: (OLD, NEW)})

    def general_comment(self, iid: int, body: str, author: str = "alice") -> None:
        self.fake.add_comment(REPO, iid, author=author, body=body)

    def diff_comment(self, iid: int, body: str, line: int, author: str = "alice") -> None:
        self.fake.add_comment(REPO, iid, author=author, body=body,
                              inline={"path": PATH, "to": line})

    def reply_in(self, iid: int, thread: Thread, body: str, author: str = "alice") -> None:
        self.fake.add_comment(REPO, iid, author=author, body=body, parent=int(thread.id))

    def edit(self, iid: int, message_id: str, body: str) -> None:
        self.fake.edit_comment(REPO, iid, int(message_id), body)

    def set_reviewers(self, iid: int, names: list[str], by: str = "alice") -> None:
        self.fake.set_reviewers(REPO, iid, names)

    def push(self, iid: int, new_text: str) -> str:
        return self.fake.push(REPO, iid, files={PATH: (OLD, new_text)})

    def reactions(self, iid: int, message_id: str) -> list[tuple[str, str]]:
        return []  # Bitbucket Cloud has no reactions

    def thumbs_down(self, iid: int, message_id: str, author: str = "alice") -> None:
        raise NotImplementedError("Bitbucket Cloud has no reactions")

    def resolved(self, iid: int, thread_id: str) -> bool:
        return self.fake.is_resolved(REPO, iid, int(thread_id))

    def automated_account(self) -> str:
        """Another access token's bot user (an `app_user`), e.g. a CI integration's."""
        return self.fake.add_access_token("ci-secret", "CI Pipeline").display_name

    def fail(self, operation: str, status: int, *, headers: dict[str, str] | None = None,
             after_handling: bool = False) -> None:
        method, path = self._PATHS[operation]
        self.fake.inject_fault(method, path, status=status, headers=headers,
                               body='{"type": "error", "error": {"message": "injected"}}',
                               after_handling=after_handling)

    def rate_limit(self, operation: str, retry_after: int) -> None:
        self.fail(operation, 429, headers={"Retry-After": str(retry_after)})

    def host_with_token(self, token: str) -> Host:
        settings = HostSettings(
            name=self.name, type="bitbucket-cloud", url=self.server.api_url,
            token=Secret(token), login=None if self.access_token else self.bot,
            username=self.bot if self.access_token else None)
        host = connect(settings, Metrics())
        http: HttpClient = host.http  # type: ignore[attr-defined]
        http.retry = FAST
        return host

    def stop(self) -> None:
        self.server.stop()
