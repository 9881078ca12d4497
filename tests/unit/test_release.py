"""Release hygiene: one version everywhere, a licence and a changelog that name it, and a
constraints file that pins the whole tested set (so a fresh machine gets what was tested)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import livereview

ROOT = Path(__file__).resolve().parents[2]
# What `.ci/run` installs: the `dev` extra (which holds `test`), PostgreSQL's driver and
# the documentation site's builder.
TESTED = ("livereview", frozenset({"dev", "postgres", "docs"}))


def test_livereview_version_prints_the_one_version_the_package_and_its_metadata_share() -> None:
    done = subprocess.run([sys.executable, "-m", "livereview", "--version"],
                          capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"livereview {livereview.__version__}\n"
    assert metadata.version("livereview") == livereview.__version__


def test_pyproject_reads_the_version_from_the_package_instead_of_writing_its_own() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert "version" in project["project"]["dynamic"]
    dynamic = project["tool"]["setuptools"]["dynamic"]["version"]
    assert dynamic == {"attr": "livereview.__version__"}


def test_the_changelog_has_an_unreleased_section_and_one_for_the_current_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## \[([^\]]+)\]", text, flags=re.MULTILINE)
    assert sections[0] == "Unreleased"
    assert livereview.__version__ in sections


def test_the_licence_is_the_mit_licence_pyproject_declares() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert project["project"]["license"] == "MIT"
    assert text.startswith("MIT License\n")
    assert "the livereview authors" in text
    assert "THE SOFTWARE IS PROVIDED \"AS IS\"" in text


def pins() -> dict[str, str]:
    """constraints.txt as {canonical name: version}."""
    found: dict[str, str] = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not pinned with =="
            found[canonicalize_name(name)] = version
    return found


def distributions_of_the_tested_set() -> tuple[dict[str, str], set[str]]:
    """Every distribution `livereview[dev,postgres,docs]` pulls in, with its installed version,
    and the names required but not installed here (none after `.ci/run`'s install)."""
    installed: dict[str, str] = {}
    missing: set[str] = set()
    seen: set[tuple[str, str]] = set()
    todo: list[tuple[str, frozenset[str]]] = [TESTED]
    while todo:
        name, extras = todo.pop()
        key = canonicalize_name(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.add(key)
            continue
        installed[key] = dist.version
        for extra in {"", *extras}:
            if (key, extra) in seen:
                continue
            seen.add((key, extra))
            for text in dist.requires or []:
                requirement = Requirement(text)
                marker = requirement.marker  # an extra's requirements carry `extra == …`
                applies = not extra if marker is None else marker.evaluate({"extra": extra})
                if applies:
                    todo.append((requirement.name, frozenset(requirement.extras)))
    installed.pop("livereview")
    return installed, missing


def test_the_constraints_file_pins_every_distribution_of_the_tested_set() -> None:
    pinned = pins()
    installed, missing = distributions_of_the_tested_set()
    unpinned = sorted(set(installed) - set(pinned))
    assert not unpinned, f"add to constraints.txt (see its header): {unpinned}"
    if os.environ.get("CI"):  # .ci/run installed with -c constraints.txt: exactly these
        assert not missing, f"required but not installed: {sorted(missing)}"
        moved = {name: (version, pinned[name]) for name, version in installed.items()
                 if pinned[name] != version}
        assert not moved, f"installed (left) is not what constraints.txt pins: {moved}"
