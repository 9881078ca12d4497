"""The fake GitHub's notifications: one thread per (user, subject), as GitHub keeps them.

https://docs.github.com/en/rest/activity/notifications — a thread is created or bumped
(`updated_at`, `unread` again) when someone @mentions the user (`reason: mention`), requests
their review (`review_requested`), or comments where they commented before (`comment`);
activity in a repository the user only watches is `subscribed`, which `participating=true`
leaves out. `GET /notifications` lists the unread threads (`all=true`: read ones too),
newest first, 50 a page at most, with `Last-Modified` and `X-Poll-Interval`; an
`If-Modified-Since` no older than the last change answers 304 (not charged). Marking read:
`PATCH /notifications/threads/{id}` (205) and `PUT /notifications` with `last_read_at`
(threads updated after it stay unread; 205).
https://docs.github.com/en/rest/activity/notifications#about-github-notifications
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime, parsedate_to_datetime

from livereview.sandbox.github.model import (
    JSON,
    GitHubError,
    PullRequest,
    Repo,
    User,
    iso,
    not_found,
)
from livereview.sandbox.loopback import locked

# GitHub's mention syntax: @login not preceded by a word character or a backtick.
MENTION = re.compile(r"(?<![\w`])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))")
PARTICIPATING = frozenset({"mention", "review_requested", "comment", "author", "assign",
                           "team_mention", "state_change", "manual"})
POLL_INTERVAL = 60  # seconds GitHub.com sends in X-Poll-Interval
_DOCS = "https://docs.github.com/rest/activity/notifications"


def _flag(value: str | None) -> bool:
    """A boolean parameter as GitHub's Rails reads it: anything but a false word is true
    (PyGithub sends `True`)."""
    return (value or "").strip().lower() not in ("", "0", "f", "false", "off")


@dataclass(eq=False)
class NotificationThread:
    id: int
    user: User
    subject: PullRequest
    reason: str
    updated_at: datetime
    latest_comment_url: str | None
    unread: bool = True
    last_read_at: datetime | None = None


@dataclass(frozen=True)
class NotModified:
    """A 304: the list has not changed since `If-Modified-Since` (no body, no charge)."""

    headers: dict[str, str]


@dataclass(frozen=True)
class Listing:
    items: list[JSON]
    headers: dict[str, str]


class GitHubNotifications:
    """A mixin of FakeGitHub: the notification threads and the changes that make them."""

    lock: threading.RLock
    api_url: str
    users: dict[str, User]
    now: Callable[..., datetime]
    _next: Callable[..., int]
    _user: Callable[[str], User]
    repo_json: Callable[[Repo], JSON]

    def _notifications_init(self) -> None:
        self.notification_threads: list[NotificationThread] = []
        self.watchers: dict[str, set[str]] = {}  # repo full name → logins watching it
        self.notified_at: dict[str, datetime] = {}  # login → last change of their list
        self.poll_interval = POLL_INTERVAL

    # ---- what makes a notification ----------------------------------------------------------
    def _touch(self, user: User, subject: PullRequest, reason: str, when: datetime,
               comment_url: str | None) -> None:
        thread = next((t for t in self.notification_threads
                       if t.user is user and t.subject is subject), None)
        if thread is None:
            thread = NotificationThread(self._next("notification", 1), user, subject, reason,
                                        when, comment_url)
            self.notification_threads.append(thread)
        elif reason in PARTICIPATING or thread.reason not in PARTICIPATING:
            thread.reason = reason  # a mention outranks watching, never the other way
        thread.updated_at, thread.unread = max(thread.updated_at, when), True
        thread.latest_comment_url = comment_url or thread.latest_comment_url
        self.notified_at[user.login] = max(self.notified_at.get(user.login, when), when)

    def _notify_comment(self, subject: PullRequest, author: User, body: str, when: datetime,
                        comment_url: str, *, before: str = "",
                        participants: set[str] | None = None) -> None:
        """Who a new (or edited: `before` is the old body) comment notifies: new @mentions,
        earlier commenters (`comment`), the subject's author, the repository's watchers."""
        mentioned = {m for m in MENTION.findall(body) if m in self.users}
        mentioned -= set(MENTION.findall(before))
        for login in sorted(mentioned - {author.login}):
            self._touch(self.users[login], subject, "mention", when, comment_url)
        if before:  # an edit notifies only the newly mentioned
            return
        commenters = participants or set()
        for login in sorted(commenters - mentioned - {author.login}):
            self._touch(self.users[login], subject, "comment", when, comment_url)
        done = mentioned | commenters | {author.login}
        if subject.user.login not in done:
            self._touch(subject.user, subject, "author", when, comment_url)
            done.add(subject.user.login)
        for login in sorted(self.watchers.get(subject.repo.full_name, set()) - done):
            self._touch(self._user(login), subject, "subscribed", when, comment_url)

    @locked
    def watch(self, login: str, repo: str) -> None:
        """`login` watches `repo`: its activity notifies them as `subscribed`."""
        self.watchers.setdefault(repo, set()).add(login)

    # ---- the REST side ------------------------------------------------------------------------
    def notification_json(self, t: NotificationThread) -> JSON:
        api, pr = self.api_url, t.subject
        kind = "pulls" if pr.is_pull else "issues"
        return {
            "id": str(t.id), "unread": t.unread, "reason": t.reason,
            "updated_at": iso(t.updated_at),
            "last_read_at": iso(t.last_read_at) if t.last_read_at else None,
            "subject": {"title": pr.title, "url": f"{api}/repos/{pr.repo.full_name}/{kind}/"
                        f"{pr.number}", "latest_comment_url": t.latest_comment_url,
                        "type": "PullRequest" if pr.is_pull else "Issue"},
            "repository": self.repo_json(pr.repo),
            "url": f"{api}/notifications/threads/{t.id}",
            "subscription_url": f"{api}/notifications/threads/{t.id}/subscription",
        }

    @locked
    def list_notifications(self, login: str, query: dict[str, str], if_modified_since: str
                           ) -> Listing | NotModified:
        changed = self.notified_at.get(login)
        headers = {"X-Poll-Interval": str(self.poll_interval)}
        if changed is not None:
            headers["Last-Modified"] = format_datetime(changed, usegmt=True)
        if if_modified_since and changed is not None:
            try:
                since = parsedate_to_datetime(if_modified_since)
            except (TypeError, ValueError):
                since = None
            if since is not None and changed <= since:
                return NotModified(headers)
        every, participating = _flag(query.get("all")), _flag(query.get("participating"))
        found = [t for t in self.notification_threads if t.user.login == login
                 and (every or t.unread)
                 and (not participating or t.reason in PARTICIPATING)]
        for name, keep in (("since", True), ("before", False)):
            if query.get(name):
                at = self._parse_time(query[name], name)
                found = [t for t in found if (t.updated_at >= at) == keep]
        found.sort(key=lambda t: (t.updated_at, t.id), reverse=True)
        return Listing([self.notification_json(t) for t in found], headers)

    def _parse_time(self, text: str, name: str) -> datetime:
        try:
            return datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise GitHubError(422, f"Invalid value for {name}", _DOCS) from None

    @locked
    def mark_thread_read(self, login: str, thread_id: int) -> None:
        thread = next((t for t in self.notification_threads
                       if t.id == thread_id and t.user.login == login), None)
        if thread is None:
            raise not_found(_DOCS)
        self._read(thread)

    @locked
    def mark_all_read(self, login: str, last_read_at: str | None) -> None:
        until = self._parse_time(last_read_at, "last_read_at") if last_read_at else self.now()
        for t in self.notification_threads:
            if t.user.login == login and t.unread and t.updated_at <= until:
                self._read(t)

    def _read(self, thread: NotificationThread) -> None:
        now = self.now()
        thread.unread, thread.last_read_at = False, now
        login = thread.user.login
        self.notified_at[login] = max(self.notified_at.get(login, now), now)

    @locked
    def notifications_of(self, login: str) -> list[JSON]:
        """Every thread of `login`, read or not (for assertions)."""
        return [self.notification_json(t) for t in self.notification_threads
                if t.user.login == login]
