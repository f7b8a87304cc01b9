"""The extraction job as a worker runs it, for the tests that judge what it returns."""

from __future__ import annotations

from rypsok.fetch.pipeline import run
from rypsok.fetch.protocol import WireResult


def job_result(page: str | bytes, url: str = "https://e.org/") -> WireResult:
    """The job's result for an HTML ``page`` served from ``url``; a failure fails the test."""
    body = page.encode() if isinstance(page, str) else page
    result = run({"content_type": "text/html", "url": url}, body)
    assert isinstance(result, WireResult), result
    return result
