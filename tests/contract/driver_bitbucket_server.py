"""The contract suite's driver for Bitbucket Data Center: FakeBitbucketDC on loopback and
the real adapter connected to it as the daemon connects it."""

from __future__ import annotations

from typing import ClassVar

from livereview.core.model import Thread
from livereview.hosts.base import Host
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from tests.contract.drivers import NEW, OLD, PATH, TOKEN, Clock, _connect

REPO = "ACME/widgets"  # PROJECT_KEY/repo-slug


class BitbucketServerDriver:
    _PATHS: ClassVar[dict[str, tuple[str, str]]] = {
        "fetch": ("GET", r"/pull-requests/\d+$"),
        "reply": ("POST", r"/pull-requests/\d+/comments$"),
        "react": ("PUT", r"/reactions/[^/]+$")}

    def __init__(self, *, reactions: bool = True) -> None:
        self.name, self.repo, self.bot = "bbs", REPO, "livereview"
        self.clock = Clock()
        self.fake = FakeBitbucketDC(token=TOKEN, clock=self.clock, reactions=reactions)
        self.fake.add_user("alice", "Alice")
        self.fake.add_repo(REPO)
        self.server = FakeBitbucketDCServer(self.fake).start()
        self.host = _connect(self.name, "bitbucket-server", self.server.url)

    def open_mr(self, title: str) -> int:
        return self.fake.add_pr(REPO, title=title, description=f"About {title}.", author="bob",
                                files={PATH: (OLD, NEW)})

    def general_comment(self, iid: int, body: str, author: str = "alice") -> None:
        self.fake.add_comment(REPO, iid, author=author, text=body)

    def diff_comment(self, iid: int, body: str, line: int, author: str = "alice") -> None:
        self.fake.add_comment(REPO, iid, author=author, text=body, path=PATH, line=line)

    def reply_in(self, iid: int, thread: Thread, body: str, author: str = "alice") -> None:
        self.fake.add_comment(REPO, iid, author=author, text=body, parent=int(thread.id))

    def edit(self, iid: int, message_id: str, body: str) -> None:
        self.fake.edit_comment(REPO, iid, int(message_id), body)

    def set_reviewers(self, iid: int, names: list[str], by: str = "alice") -> None:
        pr = self.fake.find_pr(self.fake.find_repo(*REPO.split("/", 1)), iid)
        for name in [n for n in pr.reviewers if n not in names]:
            self.fake.remove_reviewer(REPO, iid, name, by=by)
        for name in names:
            self.fake.add_reviewer(REPO, iid, name, by=by)

    def push(self, iid: int, new_text: str) -> str:
        return self.fake.push(REPO, iid, files={PATH: (OLD, new_text)})

    def reactions(self, iid: int, message_id: str) -> list[tuple[str, str]]:
        return self.fake.reactions_on(REPO, iid, int(message_id))

    def thumbs_down(self, iid: int, message_id: str, author: str = "alice") -> None:
        self.fake.react(REPO, iid, int(message_id), user=author, emoticon="thumbsdown")

    def resolved(self, iid: int, thread_id: str) -> bool:
        return bool(self.fake.thread_of(REPO, iid, int(thread_id))[0]["threadResolved"])

    def automated_account(self) -> str:
        """The service user behind a repository HTTP access token."""
        return str(self.fake.add_user("widgets-ci-token", "CI token", service=True)["name"])

    def fail(self, operation: str, status: int, *, headers: dict[str, str] | None = None,
             after_handling: bool = False) -> None:
        method, path = self._PATHS[operation]
        if status == 403:  # Bitbucket's way of saying "not permitted": 401, this exception
            status = 401
            body = ('{"errors":[{"context":null,"message":"You are not permitted to access '
                    'this resource","exceptionName":"com.atlassian.bitbucket.'
                    'AuthorisationException"}]}')
        else:
            body = '{"errors":[{"context":null,"message":"injected","exceptionName":null}]}'
        self.fake.inject_fault(method, path, status=status, headers=headers, body=body,
                               after_handling=after_handling)

    def rate_limit(self, operation: str, retry_after: int) -> None:
        method, path = self._PATHS[operation]
        self.fake.too_many_requests(method, path, retry_after=retry_after)

    def host_with_token(self, token: str) -> Host:
        return _connect(self.name, "bitbucket-server", self.server.url, token)

    def stop(self) -> None:
        self.server.stop()
