"""The result cache in Redis or Valkey, shared by every replica that uses the same key prefix.

Entries are plain strings written with ``SET key value EX ttl`` and read with ``GET``, so Redis
expires them itself (REQ-CACHE-005: LIM-K2). The entry bound (LIM-K3) holds across replicas
through an index, a sorted set of the entries by expiry time: one Lua script stores the value,
indexes it, drops index items of expired entries and, past ``max_entries``, deletes the entries
that expire first, all atomically. Time in the script is the Redis server's (``TIME``), the one
clock every replica shares. Entry keys and the index share the hash tag ``{cache}``, so the
script touches a single slot.

Every operation goes through :class:`~rypsok.cache.redis_link.RedisLink`: bounded, and a failure
is a miss or a dropped write (REQ-CACHE-006).
"""

from __future__ import annotations

import math
from typing import Final

from rypsok.cache.base import MAX_VALUE_BYTES
from rypsok.cache.redis_link import RedisLink, StoreUnavailable

# KEYS[1] the entry, KEYS[2] the index; ARGV[1] the value, ARGV[2] the lifetime in seconds,
# ARGV[3] the most entries the index may hold.
_PUT_LUA: Final = """
local now = tonumber(redis.call('TIME')[1])
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'EX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[3])
if excess > 0 then
  local first = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, excess - 1)
  for _, key in ipairs(first) do
    redis.call('DEL', key)
  end
end
local last = redis.call('ZRANGE', KEYS[2], -1, -1, 'WITHSCORES')
if last[2] then
  redis.call('EXPIREAT', KEYS[2], tonumber(last[2]) + 1)
end
return 1
"""


class RedisCache:
    """Results in a shared Redis; the link belongs to the caller, who closes it."""

    __slots__ = ("_index", "_link", "_max_entries", "_max_value_bytes", "_prefix", "_put")

    def __init__(
        self,
        link: RedisLink,
        *,
        key_prefix: str,
        max_entries: int,
        max_value_bytes: int = MAX_VALUE_BYTES,
    ) -> None:
        if max_entries < 1 or max_value_bytes < 1:
            raise ValueError("cache bounds must be positive")
        self._link = link
        self._prefix = f"{key_prefix}{{cache}}:"
        self._index = f"{self._prefix}index"
        self._max_entries = max_entries
        self._max_value_bytes = max_value_bytes
        self._put = link.script(_PUT_LUA)

    def __repr__(self) -> str:
        return f"RedisCache({self._link!r}, max_entries={self._max_entries})"

    async def get(self, key: str) -> bytes | None:
        """The value of ``key``; a miss when absent, too large, or Redis fails."""
        entry = self._prefix + key
        try:
            value = await self._link.run("cache_get", lambda client: client.get(entry))
        except StoreUnavailable:
            return None
        if not isinstance(value, bytes) or len(value) > self._max_value_bytes:
            return None
        return value

    async def put(self, key: str, value: bytes, ttl_s: float) -> None:
        """Store ``value`` for ``ttl_s`` seconds (whole seconds, at least one); never raises."""
        if len(value) > self._max_value_bytes or not ttl_s > 0:
            return
        keys = [self._prefix + key, self._index]
        args: list[bytes | int] = [value, max(1, math.ceil(ttl_s)), self._max_entries]
        try:
            await self._link.run(
                "cache_put", lambda client: self._put(keys=keys, args=args, client=client)
            )
        except StoreUnavailable:
            return

    async def aclose(self) -> None:
        """Nothing of its own to release: the entries expire in Redis, the link is shared."""
