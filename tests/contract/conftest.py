"""The contract suite runs once per host: its adapter against its stateful fake."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.contract.drivers import DRIVERS, Driver


@pytest.fixture(params=list(DRIVERS))  # GitLab first: the reference adapter
async def driver(request: pytest.FixtureRequest) -> AsyncIterator[Driver]:
    made: Driver = DRIVERS[request.param]()
    try:
        yield made
    finally:
        await made.host.close()
        made.stop()
