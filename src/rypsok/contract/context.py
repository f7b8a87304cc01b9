"""Who made a call and how to find it in the log: passed from the call runner to the core."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CallContext:
    """One call's identity: its request id (for logs) and its caller (for isolation).

    ``caller`` is "local" over stdio and the authenticated caller's name over HTTP; the
    invocation limits and the result cache are kept per caller (REQ-SEC-019, REQ-CACHE-004).
    """

    request_id: str
    caller: str
