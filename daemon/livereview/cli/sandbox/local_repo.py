"""The sandbox's local repository: a small git repository in its folder with a range worth
a local review (docs/local-reviews.md) — a base commit, then two commits that change a few
files and carry marked comments (💡 ❓ TODO), which open threads when the range is
requested."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

NAME = "repo"
TITLE = "Bulk discounts"
RANGE = "HEAD~2..HEAD"
# Who the commits are by, whatever the person's git config says (a global
# commit.gpgsign would otherwise ask for a key): `git -c` overrides it for each call.
_IDENTITY = ("-c", "user.name=Sandbox", "-c", "user.email=sandbox@example.invalid",
             "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main")
BASE = {
    "README.md": "# webshop\n\nPrices and carts of the sandbox shop.\n",
    "shop/__init__.py": "",
    "shop/cart.py": ("from shop.prices import price\n\n\nclass Cart:\n"
                     "    def __init__(self):\n        self.items = {}\n\n"
                     "    def add(self, sku, count=1):\n"
                     "        self.items[sku] = self.items.get(sku, 0) + count\n\n"
                     "    def total(self):\n"
                     "        return sum(price(s) * n for s, n in self.items.items())\n"),
    "shop/prices.py": ("_prices = {\"apple\": 50, \"pear\": 70}\n\n\n"
                       "def price(sku):\n    return _prices[sku]\n"),
}
COMMITS = (
    ("Discounts for bulk orders", {
        "shop/discounts.py": ("# 💡 thresholds are in items, not in cents\n"
                              "BULK = [(100, 0.15), (10, 0.05)]\n\n\n"
                              "def discount(count):\n    for threshold, rate in BULK:\n"
                              "        if count >= threshold:\n            return rate\n"
                              "    return 0.0\n"),
        "shop/cart.py": ("from shop.discounts import discount\nfrom shop.prices import price\n"
                         "\n\nclass Cart:\n    def __init__(self):\n        self.items = {}\n\n"
                         "    def add(self, sku, count=1):\n"
                         "        self.items[sku] = self.items.get(sku, 0) + count\n\n"
                         "    def total(self):\n        return sum(\n"
                         "            price(s) * n * (1 - discount(n))  # ❓ round per line?\n"
                         "            for s, n in self.items.items())\n"),
    }),
    ("Test the discounts", {
        "tests/test_discounts.py": ("from shop.discounts import discount\n\n\n"
                                    "def test_ten_items_get_five_percent():\n"
                                    "    assert discount(10) == 0.05\n"
                                    "    # TODO: the 100-item tier\n"),
        "README.md": ("# webshop\n\nPrices and carts of the sandbox shop. Orders of 10 "
                      "items or more get a bulk discount.\n"),
    }),
)


class NoRepository(Exception):
    """git is missing or failed: the sandbox runs without its local repository."""


def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1"}
    try:
        subprocess.run(["git", *_IDENTITY, *args], cwd=repo, env=env,  # noqa: S603, S607
                       check=True, capture_output=True)
    except FileNotFoundError:
        raise NoRepository("git is not installed") from None
    except subprocess.CalledProcessError as exc:
        said = exc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        raise NoRepository(f"git {args[0]} failed: {said[0][:200]}") from None


def _write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def create(folder: Path) -> Path:
    """`folder/repo` with the commits above; one already there (a kept `--dir`) is left as
    it is. Raises NoRepository."""
    repo = folder / NAME
    if (repo / ".git").exists():
        return repo
    repo.mkdir(exist_ok=True)
    _git(repo, "init", "-q")
    for message, files in (("A shop with prices and a cart", BASE), *COMMITS):
        _write(repo, files)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", message)
    return repo


def commands(repo: Path) -> str:
    """What to type to try local reviews there."""
    return (f"  cd {repo}\n"
            f"  livereview review request {RANGE} --title \"{TITLE}\"\n"
            "  livereview review show 1\n"
            "  livereview web                 # the review in the browser\n")
