"""The sample merge requests of `livereview sandbox`, one per fake host, each seeded through
the fake's own state API (what the fakes' tests drive): a change, a human discussion on a
line of it, and a question to the bot waiting for an answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from livereview.sandbox.bitbucket_cloud.server import FakeBitbucketCloudServer
from livereview.sandbox.bitbucket_cloud.state import FakeBitbucketCloud
from livereview.sandbox.bitbucket_server.http import FakeBitbucketDCServer
from livereview.sandbox.bitbucket_server.state import FakeBitbucketDC
from livereview.sandbox.github.server import FakeGitHubServer
from livereview.sandbox.github.state import FakeGitHub
from livereview.sandbox.gitlab.server import FakeGitLabServer
from livereview.sandbox.gitlab.state import FakeGitLab

BOT = "livereview"
OLD = "import threading\n\n_cache = {}\n\n\ndef price(sku):\n    return _cache.get(sku)\n"
NEW = ("import threading\n\n_cache = {}\n_lock = threading.Lock()\n\n\ndef price(sku):\n"
       "    with _lock:\n        return _cache.get(sku)\n\n\ndef set_price(sku, value):\n"
       "    _cache[sku] = value\n")
FILES = {"shop/prices.py": (OLD, NEW),
         "shop/checkout.py": ("", "from shop.prices import price\n\n\ndef total(skus):\n"
                                  "    return sum(price(s) for s in skus)\n")}
TITLE = "Guard the price cache with a lock"
DESCRIPTION = "Checkout saw stale prices under load; this adds a lock around the cache."
ON_LINE = ("shop/prices.py", 9)  # `with _lock:`
DISCUSSION = ("Is a lock needed for a read at all?", "Writes happen from the import job too.")
QUESTION = f"@{BOT} is `set_price` safe without the lock?"


class Served(Protocol):
    url: str

    def stop(self) -> None: ...


@dataclass(frozen=True)
class Sample:
    """One fake host, served, with its sample MR: what the config and the printout need."""

    name: str  # the [[hosts]] name
    type: str
    url: str  # hosts[].url
    repo: str
    token: str
    mr_url: str
    server: Served
    login: str = ""  # Bitbucket Cloud: the account whose API token the secret is


def gitlab(token: str) -> tuple[FakeGitLab, Sample]:
    fake = FakeGitLab(token=token, bot_username=BOT)
    for user in ("alice", "bob"):
        fake.add_user(user, f"{user.title()} Example")
    repo = "sandbox/webshop"
    fake.add_project(repo)
    iid = fake.add_mr(repo, title=TITLE, description=DESCRIPTION, author="bob", files=FILES)
    position = {"new_path": ON_LINE[0], "new_line": ON_LINE[1]}
    note = fake.add_note(repo, iid, author="alice", body=DISCUSSION[0], position=position)
    thread = next(str(d["id"]) for d in fake.discussions(repo, iid)
                  if any(n["id"] == note["id"] for n in d["notes"]))
    fake.add_note(repo, iid, author="bob", body=DISCUSSION[1], reply_to_discussion=thread)
    fake.add_note(repo, iid, author="alice", body=QUESTION)
    server = FakeGitLabServer(fake).start()
    return fake, Sample("gitlab", "gitlab", server.url, repo, token,
                        f"{server.url}/{repo}/-/merge_requests/{iid}", server)


def github(token: str) -> Sample:
    fake = FakeGitHub(token=token, bot_login=BOT)
    for user in ("alice", "bob"):
        fake.add_user(user, f"{user.title()} Example")
    repo = "sandbox/webshop"
    number = fake.add_pr(repo, title=TITLE, body=DESCRIPTION, author="bob", files=FILES)
    fake.add_review_comment(repo, number, author="alice", body=DISCUSSION[0],
                            path=ON_LINE[0], line=ON_LINE[1])
    fake.add_issue_comment(repo, number, author="bob", body=DISCUSSION[1])
    fake.add_issue_comment(repo, number, author="alice", body=QUESTION)
    server = FakeGitHubServer(fake).start()
    return Sample("github", "github", server.enterprise_url, repo, token,
                  f"{server.url}/{repo}/pull/{number}", server)


def bitbucket_cloud(token: str) -> Sample:
    fake = FakeBitbucketCloud(token=token, bot_login=BOT)
    for user in ("alice", "bob"):
        fake.add_user(user, f"{user.title()} Example")
    repo = "sandbox/webshop"
    number = fake.add_pr(repo, title=TITLE, description=DESCRIPTION, author="bob", files=FILES)
    first = fake.add_comment(repo, number, author="alice", body=DISCUSSION[0],
                             inline={"path": ON_LINE[0], "to": ON_LINE[1]})
    fake.add_comment(repo, number, author="bob", body=DISCUSSION[1], parent=int(first["id"]))
    fake.add_comment(repo, number, author="alice", body=QUESTION)
    server = FakeBitbucketCloudServer(fake).start()
    return Sample("bitbucket-cloud", "bitbucket-cloud", server.api_url, repo, token,
                  f"{fake.web_url}/{repo}/pull-requests/{number}", server, login=BOT)


def bitbucket_dc(token: str) -> Sample:
    fake = FakeBitbucketDC(token=token, bot_name=BOT)
    for user in ("alice", "bob"):
        fake.add_user(user, f"{user.title()} Example")
    repo = "SAND/webshop"
    pr = fake.add_pr(repo, title=TITLE, description=DESCRIPTION, author="bob", files=FILES)
    first = fake.add_comment(repo, pr, author="alice", text=DISCUSSION[0], path=ON_LINE[0],
                             line=ON_LINE[1])
    fake.add_comment(repo, pr, author="bob", text=DISCUSSION[1], parent=int(first["id"]))
    fake.add_comment(repo, pr, author="alice", text=QUESTION)
    server = FakeBitbucketDCServer(fake).start()
    project, slug = repo.split("/")
    return Sample("bitbucket-dc", "bitbucket-server", server.url, repo, token,
                  f"{server.url}/projects/{project}/repos/{slug}/pull-requests/{pr}", server)
