"""The payload fuzzers aim their mutations at the fields the adapters read (READ_KEYS, found
in the adapters' source): each host's folder of the host layer (docs/DESIGN.md §2) is
read, so a mutation lands on a field a parser reads far more often than on one it ignores."""

from __future__ import annotations

from pathlib import Path

import pytest

import livereview.hosts as hosts_package
from tests.unit.fuzz_payloads import _ACCESSOR, READ_KEYS

HOSTS = Path(hosts_package.__file__).parent


@pytest.mark.parametrize("host", ["gitlab", "github", "bitbucket_cloud", "bitbucket_server"])
def test_the_fields_each_host_s_adapter_reads_are_fuzz_targets(host: str) -> None:
    read = {key for source in (HOSTS / host).glob("*.py")
            for key in _ACCESSOR.findall(source.read_text(encoding="utf-8"))}
    assert read, f"no field read through a payload accessor in hosts/{host}/"
    assert read <= READ_KEYS, sorted(read - READ_KEYS)

