"""The README is the front door and docs/ the site behind it: every link from one to the
other lands, the README opens with its two commands, and every page the code or the
alert rules name exists.

`mkdocs build --strict` (in .ci/run, and here when MkDocs is installed) checks the links
between the site's own pages, anchors included; the README is not part of the site, so its
links are checked here.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
COMMANDS = (
    "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e . "
    "&& .venv/bin/livereview demo\n"
    "python3 -m venv .venv && .venv/bin/pip install -c constraints.txt -e '.[test]' "
    "&& .venv/bin/python -m pytest -n 4 --dist loadgroup\n")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_says_what_it_is_then_gives_its_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert first_block is not None and first_block[1] == COMMANDS
    before = text[:first_block.start()]
    assert before.startswith("# livereview\n") and "code reviewer" in before


def anchors(page: Path) -> set[str]:
    """The anchors MkDocs gives a page's headings (toc's slugify: lower case, punctuation
    dropped, spaces to hyphens), outside code blocks."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {re.sub(r"\s+", "-", re.sub(r"[^\w\s-]", "", heading).strip().lower())
            for heading in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def test_every_link_of_the_readme_lands() -> None:
    links = [link for link in LINK.findall(README.read_text(encoding="utf-8"))
             if not link.startswith(("http://", "https://"))]
    assert "docs/configuration.md" in links and "docs/dashboard.png" in links
    for link in links:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), f"README links to {link}: no such file"
        if anchor:
            assert anchor in anchors(target), f"README links to {link}: no such heading"


def test_every_page_the_code_and_the_alerts_name_exists() -> None:
    named: set[str] = set()
    for folder, pattern in (("daemon", "*.py"), ("contrib", "*.yml"), (".ci", "*")):
        for source in (ROOT / folder).rglob(pattern):
            if source.is_file():
                named |= set(re.findall(r"docs/[\w-]+\.md", source.read_text(encoding="utf-8")))
    assert "docs/configuration.md" in named and "docs/troubleshooting.md" in named
    assert not {page for page in named if not (ROOT / page).is_file()}


def test_the_site_builds_without_a_broken_link(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None:
        if os.environ.get("CI"):
            pytest.fail("MkDocs is not installed; CI installs it with pip install -e '.[docs]'")
        pytest.skip("MkDocs is not installed (pip install -e '.[docs]')")
    built = subprocess.run(  # noqa: S603 - MkDocs from this interpreter, on this checkout
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet",
         "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "site" / "configuration" / "index.html").is_file()
    security = (tmp_path / "site" / "security" / "index.html").read_text(encoding="utf-8")
    assert "Threat model" in security  # SECURITY.md itself, included
