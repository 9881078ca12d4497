"""The review side of each contract driver: what a person sees of a bot's review on the
host (who approves, who requested changes), MRs shaped for reviews (thousands of files, the
bot's own), and which requests the fake served. Kept apart from drivers.py, which stays the
reply workflow's interface."""

from __future__ import annotations

from typing import Any, Protocol

from livereview.hosts.bitbucket_cloud.budget import Budget
from livereview.sandbox.github import reviews as github_reviews
from tests.contract.drivers import REPO, Driver

BIG_TEXT = "line one\nline two\n"


class ReviewSide(Protocol):
    # False where the host has no "changes requested" state (GitLab: only no approval)
    changes_state: bool
    whole_diff: str  # the path of a request for the MR's whole diff at once

    def verdict(self, iid: int) -> str:
        """The bot's standing on the MR: approved | changes_requested | none."""

    def open_files(self, count: int) -> int:
        """An MR changing `count` small files (`f0000.txt`…), by a human."""

    def open_with(self, files: dict[str, tuple[str, str]]) -> int:
        """An MR changing `files` (path → old, new text; "" is absent), by a human."""

    def hide_over(self, size: int) -> bool:
        """Make the host leave out file diffs over `size` bytes, as it does past its
        limits; False where the host has no such limit."""

    def open_own(self) -> int:
        """An MR whose author is the bot's own account."""

    def served(self) -> list[tuple[str, str, dict[str, str]]]:
        """Requests the fake served since the last `served()`."""


def _files(count: int) -> dict[str, tuple[str, str]]:
    return {f"f{n:04d}.txt": ("", BIG_TEXT + f"file {n}\n") for n in range(count)}


class _Side:
    changes_state = True

    def open_files(self, count: int) -> int:
        return self.open_with(_files(count))

    def open_with(self, files: dict[str, tuple[str, str]]) -> int:
        return int(self.fake.add_pr(REPO, title="Files", author="bob", files=files))

    def hide_over(self, size: int) -> bool:
        return False

    def __init__(self, driver: Any) -> None:
        self.d = driver
        self.fake = driver.fake
        self.fake.reset_requests()

    def served(self) -> list[tuple[str, str, dict[str, str]]]:
        seen = list(self.fake.requests)
        self.fake.reset_requests()
        return seen


class GitLabSide(_Side):
    changes_state = False
    whole_diff = r"/changes$|/versions/\d+$"

    def verdict(self, iid: int) -> str:
        return "approved" if self.d.bot in self.fake.approvers(REPO, iid) else "none"

    def open_with(self, files: dict[str, tuple[str, str]]) -> int:
        return int(self.fake.add_mr(REPO, title="Files", author="bob", files=files))

    def hide_over(self, size: int) -> bool:
        self.fake.collapse_file_bytes = self.fake.too_large_file_bytes = size
        return True

    def open_own(self) -> int:
        return int(self.fake.add_mr(REPO, title="Mine", author=self.d.bot,
                                    files=_files(1)))


class GitHubSide(_Side):
    whole_diff = r"\.diff$|/compare/"

    def verdict(self, iid: int) -> str:
        state = github_reviews.standing(self.fake, REPO, iid, self.d.bot)
        return {"APPROVED": "approved", "CHANGES_REQUESTED": "changes_requested"}.get(
            state, "none")

    def hide_over(self, size: int) -> bool:
        self.fake.patch_limit_bytes = size
        return True

    def open_own(self) -> int:
        return int(self.fake.add_pr(REPO, title="Mine", author=self.d.bot, files=_files(1)))


class BitbucketCloudSide(_Side):
    # the PR's or the repository's diff without a `path`: the whole diff at once
    whole_diff = r"/pullrequests/\d+/diff\b|/diff/[^/?]+(\?(?!.*\bpath=).*)?$"

    def verdict(self, iid: int) -> str:
        return str(self.fake.participant_state(REPO, iid, self.d.bot) or "none")

    def open_files(self, count: int) -> int:
        # A workspace with a scaled quota: at the 1 000/hour base the adapter paces the
        # ~150 diff requests and 30 diffstat pages of 3 000 files over minutes, as it should.
        self.fake.rate_limit_per_hour = 100_000
        self.d.host.budget = Budget(limit=lambda: 100_000)
        return self.open_with(_files(count))

    def open_own(self) -> int:
        return int(self.fake.add_pr(REPO, title="Mine", author=self.d.bot, files=_files(1)))


class BitbucketServerSide(_Side):
    whole_diff = r"/pull-requests/\d+\.diff|/repos/[^/]+/diff\b"

    def verdict(self, iid: int) -> str:
        status = self.fake.status_of(REPO, iid, self.d.bot)
        return {"APPROVED": "approved", "NEEDS_WORK": "changes_requested"}.get(status, "none")

    def open_own(self) -> int:
        return int(self.fake.add_pr(REPO, title="Mine", author=self.d.bot, files=_files(1)))


def review_side(driver: Driver) -> ReviewSide:
    kind = type(driver).__name__
    sides: dict[str, type[_Side]] = {"GitLabDriver": GitLabSide, "GitHubDriver": GitHubSide,
                                     "BitbucketCloudDriver": BitbucketCloudSide,
                                     "BitbucketServerDriver": BitbucketServerSide}
    return sides[kind](driver)  # type: ignore[return-value]
