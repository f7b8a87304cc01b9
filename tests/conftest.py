"""Shared fixtures: the anyio backend for async tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    """Run async tests on asyncio, the loop rypsok serves on."""
    return "asyncio"
