"""Fixtures of the health tests: a manual clock and anyio on asyncio."""

from __future__ import annotations

import pytest

from rypsok.health.clock import ManualClock


@pytest.fixture
def anyio_backend() -> str:
    """Run the async tests on asyncio, the backend of the service."""
    return "asyncio"


@pytest.fixture
def clock() -> ManualClock:
    """A clock that moves only when a test moves it."""
    return ManualClock()
