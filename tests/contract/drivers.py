"""Per-host drivers for the contract suite: the test side of each host's stateful fake.

A driver starts the fake on loopback, connects the real adapter to it (`connect()`, as the
daemon does), and does to the fake what people do on the host — open an MR, write a
general or a diff comment, reply, edit, push — plus fault injection. The suite only sees
this interface and the Host protocol, so its body is the same for every host; a new host
plugs in by writing one driver.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Protocol

from livereview.app.hosts import connect
from livereview.core.model import Thread
from livereview.hosts.base import Host
from livereview.hosts.http import HttpClient, RetryPolicy
from livereview.metrics import Metrics
from livereview.sandbox.github.server import FakeGitHubServer
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab
from livereview.settings import HostSettings, Secret

TOKEN = "contract-SECRET-token-0042"
REPO = "acme/widgets"
PATH = "src/cache.py"
OLD = "import threading\n\ncache = {}\n\n\ndef get(key):\n    return cache.get(key)\n"
NEW = ("import threading\n\ncache = {}\nlock = threading.Lock()\n\n\ndef get(key):\n"
       "    with lock:\n        return cache.get(key)\n")
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=5.0)


class Clock:
    """The fakes' clock: starts now, moves only when told (no sleeps in the suite)."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(microsecond=0)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


class Driver(Protocol):
    name: str
    host: Host
    repo: str
    bot: str
    clock: Clock

    def open_mr(self, title: str) -> int: ...

    def general_comment(self, iid: int, body: str, author: str = "alice") -> None: ...

    def diff_comment(self, iid: int, body: str, line: int, author: str = "alice") -> None: ...

    def reply_in(self, iid: int, thread: Thread, body: str, author: str = "alice") -> None: ...

    def edit(self, iid: int, message_id: str, body: str) -> None: ...

    def set_reviewers(self, iid: int, names: list[str], by: str = "alice") -> None:
        """Make `names` the MR's reviewers, as `by` would in the host's UI."""

    def push(self, iid: int, new_text: str) -> str: ...

    def reactions(self, iid: int, message_id: str) -> list[tuple[str, str]]: ...

    def thumbs_down(self, iid: int, message_id: str, author: str = "alice") -> None: ...

    def resolved(self, iid: int, thread_id: str) -> bool: ...

    def automated_account(self) -> str:
        """A user the host itself marks as automated (an App, an access-token user)."""

    def fail(self, operation: str, status: int, *, headers: dict[str, str] | None = None,
             after_handling: bool = False) -> None:
        """The next `operation` (fetch: the MR's GET; reply; react) answers `status`
        (0: the connection drops)."""

    def rate_limit(self, operation: str, retry_after: int) -> None:
        """The host's own way of saying "slow down" on the next `operation`."""

    def host_with_token(self, token: str) -> Host: ...

    def stop(self) -> None: ...


def _connect(name: str, kind: str, url: str, token: str = TOKEN) -> Host:
    host = connect(HostSettings(name=name, type=kind, url=url, token=Secret(token)), Metrics())
    http: HttpClient = host.http  # type: ignore[attr-defined]
    http.retry = FAST
    return host


class GitLabDriver:
    _PATHS: ClassVar[dict[str, tuple[str, str]]] = {
        "fetch": ("GET", r"/merge_requests/\d+$"),
        "reply": ("POST", r"/discussions/[0-9a-f]+/notes$"),
        "react": ("POST", r"/award_emoji$")}

    def __init__(self) -> None:
        self.name, self.repo, self.bot = "gl", REPO, "livereview"
        self.clock = Clock()
        self.fake = FakeGitLab(token=TOKEN, clock=self.clock)
        self.fake.add_user("alice", "Alice")
        self.fake.add_project(REPO)
        self.server = FakeGitLabServer(self.fake).start()
        self.host = _connect(self.name, "gitlab", self.server.url)

    def open_mr(self, title: str) -> int:
        return self.fake.add_mr(REPO, title=title, description=f"About {title}.", author="bob",
                                files={PATH: (OLD, NEW)})

    def general_comment(self, iid: int, body: str, author: str = "alice") -> None:
        self.fake.add_note(REPO, iid, author=author, body=body)

    def diff_comment(self, iid: int, body: str, line: int, author: str = "alice") -> None:
        self.fake.add_note(REPO, iid, author=author, body=body,
                           position={"new_path": PATH, "new_line": line})

    def reply_in(self, iid: int, thread: Thread, body: str, author: str = "alice") -> None:
        self.fake.add_note(REPO, iid, author=author, body=body, reply_to_discussion=thread.id)

    def edit(self, iid: int, message_id: str, body: str) -> None:
        self.fake.edit_note(REPO, iid, int(message_id), body)

    def set_reviewers(self, iid: int, names: list[str], by: str = "alice") -> None:
        self.fake.set_reviewers(REPO, iid, names, by=by)

    def push(self, iid: int, new_text: str) -> str:
        return self.fake.push(REPO, iid, files={PATH: (OLD, new_text)})

    def reactions(self, iid: int, message_id: str) -> list[tuple[str, str]]:
        return [(a["name"], a["user"]["username"])
                for a in self.fake.awards_on(REPO, iid, int(message_id))]

    def thumbs_down(self, iid: int, message_id: str, author: str = "alice") -> None:
        self.fake.award(REPO, iid, int(message_id), user=author, name="thumbsdown")

    def resolved(self, iid: int, thread_id: str) -> bool:
        discussion = next(d for d in self.fake.discussions(REPO, iid) if d["id"] == thread_id)
        return all(n["resolved"] for n in discussion["notes"] if n["resolvable"])

    def automated_account(self) -> str:
        return self.fake.add_token_bot(REPO)

    def fail(self, operation: str, status: int, *, headers: dict[str, str] | None = None,
             after_handling: bool = False) -> None:
        method, path = self._PATHS[operation]
        self.fake.inject_fault(method, path, status=status, headers=headers,
                               body='{"message":"injected"}', after_handling=after_handling)

    def rate_limit(self, operation: str, retry_after: int) -> None:
        self.fail(operation, 429, headers={"Retry-After": str(retry_after)})

    def host_with_token(self, token: str) -> Host:
        return _connect(self.name, "gitlab", self.server.url, token)

    def stop(self) -> None:
        self.server.stop()


class GitHubDriver:
    _PATHS: ClassVar[dict[str, tuple[str, str]]] = {
        "fetch": ("GET", r"/pulls/\d+$"),
        "reply": ("POST", r"/replies$|/issues/\d+/comments$"),
        "react": ("POST", r"/reactions$")}

    def __init__(self, *, enterprise: bool = False) -> None:
        self.name, self.repo, self.bot = "gh", REPO, "livereview"
        self.clock = Clock()
        self.fake = FakeGitHub(token=TOKEN, clock=self.clock)
        self.fake.add_user("alice", "Alice")
        self.fake.add_repo(REPO)
        self.server = FakeGitHubServer(self.fake).start()
        self.url = self.server.enterprise_url if enterprise else self.server.url
        self.host = _connect(self.name, "github", self.url)

    @staticmethod
    def _kind(message_id: str) -> tuple[str, int]:
        match = re.fullmatch(r"(issuecomment-|discussion_r|pullrequestreview-)(\d+)", message_id)
        assert match, message_id
        kind = {"issuecomment-": "issue", "discussion_r": "review",
                "pullrequestreview-": "review-body"}[match[1]]
        return kind, int(match[2])

    def open_mr(self, title: str) -> int:
        return self.fake.add_pr(REPO, title=title, body=f"About {title}.", author="bob",
                                files={PATH: (OLD, NEW)})

    def general_comment(self, iid: int, body: str, author: str = "alice") -> None:
        self.fake.add_issue_comment(REPO, iid, author=author, body=body)

    def diff_comment(self, iid: int, body: str, line: int, author: str = "alice") -> None:
        self.fake.add_review_comment(REPO, iid, author=author, body=body, path=PATH, line=line)

    def reply_in(self, iid: int, thread: Thread, body: str, author: str = "alice") -> None:
        self.fake.reply_review_comment(REPO, iid, self._kind(thread.id)[1], author=author,
                                       body=body)

    def edit(self, iid: int, message_id: str, body: str) -> None:
        self.fake.edit_comment(REPO, *self._kind(message_id), body)

    def set_reviewers(self, iid: int, names: list[str], by: str = "alice") -> None:
        asked = {u.login for u in self.fake.find_issue(REPO, iid, pull=True).requested_reviewers}
        for name in asked - set(names):
            self.fake.remove_review_request(REPO, iid, reviewer=name)
        for name in names:
            if name not in asked:
                self.fake.request_review(REPO, iid, reviewer=name)

    def push(self, iid: int, new_text: str) -> str:
        return self.fake.push(REPO, iid, files={PATH: (OLD, new_text)})

    def reactions(self, iid: int, message_id: str) -> list[tuple[str, str]]:
        return self.fake.reactions_on(REPO, *self._kind(message_id))

    def thumbs_down(self, iid: int, message_id: str, author: str = "alice") -> None:
        self.fake.react(REPO, *self._kind(message_id), user=author, content="-1")

    def resolved(self, iid: int, thread_id: str) -> bool:
        return self.fake.thread_of_comment(REPO, self._kind(thread_id)[1]).resolved

    def automated_account(self) -> str:
        login: str = self.fake.add_user("ci-helper[bot]")["login"]  # a GitHub App's account
        return login

    def fail(self, operation: str, status: int, *, headers: dict[str, str] | None = None,
             after_handling: bool = False) -> None:
        method, path = self._PATHS[operation]
        body = '{"message":"injected","documentation_url":"https://docs.github.com/rest"}'
        self.fake.inject_fault(method, path, status=status, headers=headers, body=body,
                               after_handling=after_handling)

    def rate_limit(self, operation: str, retry_after: int) -> None:
        """GitHub's secondary rate limit: a 403 with Retry-After."""
        method, path = self._PATHS[operation]
        self.fake.secondary_rate_limit(method, path, retry_after=retry_after)

    def host_with_token(self, token: str) -> Host:
        return _connect(self.name, "github", self.url, token)

    def stop(self) -> None:
        self.server.stop()


DRIVERS: dict[str, Any] = {
    "gitlab": GitLabDriver,
    "github": GitHubDriver,
    "github-enterprise": lambda: GitHubDriver(enterprise=True),
    "bitbucket-cloud": lambda: _bitbucket_cloud(),
    "bitbucket-cloud-access-token": lambda: _bitbucket_cloud(access_token=True),
    "bitbucket-server": lambda: _bitbucket_server(),
}


def _bitbucket_cloud(*, access_token: bool = False) -> Any:
    # Imported when used: that driver module builds on this one.
    from tests.contract.driver_bitbucket_cloud import BitbucketCloudDriver
    return BitbucketCloudDriver(access_token=access_token)


def _bitbucket_server() -> Any:
    # Imported when used: that driver module builds on this one.
    from tests.contract.driver_bitbucket_server import BitbucketServerDriver
    return BitbucketServerDriver()
