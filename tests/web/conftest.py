from __future__ import annotations

from collections.abc import Iterator

import pytest

from simulations.embedded_worker import stop_embedded_workers


@pytest.fixture(autouse=True)
def _embedded_workers_stop_after_each_test() -> Iterator[None]:
    """The server's first connection starts the embedded workers (as a real server does); stop them before the
    test's database is flushed, so no drive of this test runs into the next one."""
    yield
    stop_embedded_workers()
