"""Sliding windows shared by several replicas through Redis or Valkey.

Behind a load balancer, ten replicas with in-process windows would send ten times an engine's
admitted rate (REQ-CMP-002) and give a caller ten times its calls per minute (REQ-SEC-019). With
``[cache] backend = "redis"`` the rate windows of :mod:`rypsok.health.provider_limits` and the
(caller, tool) windows of :mod:`rypsok.health.invocation` live in Redis instead: one sorted set
per window, scored by start time.

**One atomic step.** A Lua script (run with EVALSHA, loaded with EVAL when Redis does not know
it) trims the starts that left the window, counts the rest, and either records the new start or
answers how long until the oldest blocking start leaves. No other client can act between the
count and the record, so replicas never both take the last place. It is the same rule as the
in-process windows: a start at ``t`` is allowed when fewer than ``limit`` starts lie in
``(t - window, t]``.

**One clock.** The script reads the time from the Redis server (``TIME``), in microseconds.
Replicas' clocks may be skewed against each other by more than an engine's window is long
(GDELT admits one request per 6 s); had each replica sent its own time, a replica behind would
see old starts as recent and one ahead would drop recent starts as old, so the shared rate would
hold only as well as the replicas agree on the time. With the server's clock there is nothing
to agree on. A waiting time, not a point in time, comes back, so each replica converts it to its
own monotonic clock.

**Fail open.** When Redis fails or is down, each window falls back to its in-process twin and
the limits are per process again, as without Redis; the link logs the outage once. A call never
fails because Redis is down. To keep that fallback meaningful, every start admitted by Redis is
also recorded in the twin. Starts admitted during an outage are not known to Redis afterwards,
so for one window's length after an outage the replicas together may exceed the shared limit.

Concurrency caps (LIM-C1, LIM-C2, an engine's ``max_in_flight``) stay per process: a slot held
by a replica that dies would otherwise be lost to all. With ``n`` replicas, up to ``n`` times an
engine's concurrency may be in flight; its rate holds.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Final

from rypsok.cache.redis_link import RedisLink, StoreUnavailable
from rypsok.contract.vocabulary import ToolName
from rypsok.engines.base import RateLimit
from rypsok.health.provider_limits import RateWindow

# KEYS[1] the window; ARGV[1] the limit, ARGV[2] the window length in microseconds, ARGV[3] a
# member unique to this start. Returns 0 when the start was recorded, otherwise the
# microseconds until the start that blocks it leaves the window (at least 1).
_SLIDING_WINDOW_LUA: Final = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local limit = tonumber(ARGV[1])
local span = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - span)
local held = redis.call('ZCARD', KEYS[1])
if held < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], math.ceil(span / 1000) + 1000)
  return 0
end
local blocking = redis.call('ZRANGE', KEYS[1], held - limit, held - limit, 'WITHSCORES')
return math.max(1, tonumber(blocking[2]) + span - now)
"""


class SharedWindows:
    """Sliding-window logs in Redis, keyed under the configured prefix."""

    __slots__ = ("_link", "_prefix", "_script")

    def __init__(self, link: RedisLink, *, key_prefix: str) -> None:
        self._link = link
        self._prefix = key_prefix
        self._script = link.script(_SLIDING_WINDOW_LUA)

    def __repr__(self) -> str:
        return f"SharedWindows({self._link!r})"

    async def try_start(self, name: str, limit: int, window_s: float) -> float | None:
        """Record one start in window ``name`` if fewer than ``limit`` lie in the last
        ``window_s`` seconds and return 0.0; otherwise the seconds until one may, recording
        nothing; None when Redis is unavailable."""
        keys = [self._prefix + name]
        args: list[int | str] = [limit, max(1, round(window_s * 1_000_000)), secrets.token_hex(8)]
        try:
            wait_us = await self._link.run(
                "shared_window", lambda client: self._script(keys=keys, args=args, client=client)
            )
        except StoreUnavailable:
            return None
        if not isinstance(wait_us, int) or wait_us < 0:  # not our script's answer
            return None
        return wait_us / 1_000_000

    def engine_window(self, engine: str, rate: RateLimit, local: RateWindow) -> RateWindow:
        """The shared rate window of ``engine``, with ``local`` as its fallback.

        Pass this method as ``shared_rate`` to
        :class:`~rypsok.health.provider_limits.ProviderLimits`.
        """
        return _SharedRateWindow(self, f"rate:{engine}", rate, local)

    async def try_call(
        self, tool: ToolName, caller: str, limit: int, window_s: float
    ) -> float | None:
        """:meth:`try_start` for one call of ``tool`` by ``caller`` (the invocation limits).

        The key holds a digest of the caller's name, not the name: caller names are never
        exported (REQ-SEC-019), and Redis is shared infrastructure.
        """
        digest = hashlib.sha256(caller.encode("utf-8")).hexdigest()[:32]
        return await self.try_start(f"calls:{ToolName(tool).value}:{digest}", limit, window_s)


class _SharedRateWindow:
    """An engine's rate window in Redis, falling back to the in-process one."""

    __slots__ = ("_local", "_name", "_rate", "_shared")

    def __init__(self, shared: SharedWindows, name: str, rate: RateLimit, local: RateWindow):
        self._shared = shared
        self._name = name
        self._rate = rate
        self._local = local

    def earliest(self, now: float) -> float:
        """The in-process estimate: a lower bound, since Redis holds this process's starts too."""
        return self._local.earliest(now)

    async def reserve(self, now: float) -> float:
        """Take a start in Redis, or learn when one may be; the in-process window if it fails."""
        wait_s = await self._shared.try_start(
            self._name, self._rate.requests, float(self._rate.per_seconds)
        )
        if wait_s is None:  # fail open to the per-process limit; the link logged the outage
            return await self._local.reserve(now)
        if wait_s > 0:
            return now + wait_s
        await self._local.reserve(now)  # this process's history, for a later fallback
        return now
