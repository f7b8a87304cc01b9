"""One guarded connection to Redis or Valkey, shared by the result cache and the shared limits.

Every operation is bounded by a short timeout (:data:`OP_TIMEOUT_S`, also the socket timeouts)
and any failure of it (connection refused, timeout, protocol or script error) becomes
:class:`StoreUnavailable`, which every user turns into a degraded answer: a cache miss, a
dropped write, per-process limits. After a failure the link stays *down* for
:data:`RETRY_AFTER_S`: operations fail at once instead of each waiting out the timeout, so an
outage costs one timeout per period, not one per request. The outage and the recovery are
logged once each, with the exception class only (REQ-CACHE-006, REQ-ERR-004).

The URL may carry a password. It is revealed only to build the client, and appears in no
``repr``, log line or error message of rypsok. redis-py itself retries nothing here: the caller
decides what a failure costs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeVar

import anyio

from rypsok.cache.base import CacheConfigError
from rypsok.config.secrets import Secret
from rypsok.health.clock import Clock
from rypsok.logs import log_event

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

OP_TIMEOUT_S: Final = 0.25
"""The longest one operation may take; a healthy Redis on the same network answers in ~1 ms."""

RETRY_AFTER_S: Final = 5.0
"""How long the link stays down after a failure before it tries Redis again."""

_SCHEMES: Final = ("redis://", "rediss://", "unix://")

T = TypeVar("T")


class StoreUnavailable(Exception):
    """Redis did not answer (or is down for a while); the caller degrades."""


class RedisLink:
    """A Redis client whose every operation is bounded and whose failures are contained."""

    __slots__ = ("_client", "_clock", "_down", "_down_until", "_logger", "_retry_s", "_timeout_s")

    def __init__(
        self,
        client: Redis,
        *,
        clock: Clock,
        logger: logging.Logger,
        timeout_s: float = OP_TIMEOUT_S,
        retry_after_s: float = RETRY_AFTER_S,
    ) -> None:
        self._client = client
        self._clock = clock
        self._logger = logger
        self._timeout_s = timeout_s
        self._retry_s = retry_after_s
        self._down = False
        self._down_until = 0.0

    def __repr__(self) -> str:
        return f"RedisLink(<url redacted>, timeout_s={self._timeout_s}, down={self._down})"

    @property
    def down(self) -> bool:
        """Whether the last operation failed and the link has not recovered since."""
        return self._down

    def script(self, source: str) -> AsyncScript:
        """A Lua script run with EVALSHA, loaded (EVAL) once when Redis does not know it."""
        return self._client.register_script(source)

    async def run(self, operation: str, call: Callable[[Redis], Awaitable[T]]) -> T:
        """``call(client)`` within the timeout; raises :class:`StoreUnavailable` on any failure.

        ``operation`` names the operation in the log (a fixed word, never a key or value).
        """
        if self._down and self._clock.monotonic() < self._down_until:
            raise StoreUnavailable
        try:
            with anyio.fail_after(self._timeout_s):
                result = await call(self._client)
        except Exception as exc:  # any failure of the store degrades, never fails a call
            self._failed(operation, exc)
            raise StoreUnavailable from None
        if self._down:
            self._down = False
            log_event(self._logger, logging.INFO, "shared_store_recovered", operation=operation)
        return result

    async def aclose(self) -> None:
        """Close the connections; bounded, and silent about failures of a store going away."""
        with anyio.move_on_after(1.0):
            try:
                await self._client.aclose()
            except Exception as exc:  # closing a broken connection may fail; nothing is lost
                log_event(
                    self._logger,
                    logging.DEBUG,
                    "shared_store_close_failed",
                    exception=type(exc).__name__,
                )

    def _failed(self, operation: str, exc: Exception) -> None:
        self._down_until = self._clock.monotonic() + self._retry_s
        if not self._down:
            self._down = True
            log_event(
                self._logger,
                logging.WARNING,
                "shared_store_unavailable",
                operation=operation,
                exception=type(exc).__name__,
                retry_in_s=self._retry_s,
            )


def connect(
    url: Secret,
    *,
    clock: Clock,
    logger: logging.Logger,
    timeout_s: float = OP_TIMEOUT_S,
    retry_after_s: float = RETRY_AFTER_S,
) -> RedisLink:
    """A link to the Redis at ``url``; nothing is sent until the first operation.

    Raises :class:`CacheConfigError` naming ``[cache] backend`` when the ``redis`` package is
    missing, and one naming the URL reference when the URL is not a Redis URL.
    """
    try:
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
    except ImportError:
        raise CacheConfigError(
            '[cache] backend = "redis" needs the redis package; install rypsok[redis] '
            'or use backend = "memory"'
        ) from None
    revealed = url.reveal()
    if not revealed.startswith(_SCHEMES):
        raise CacheConfigError(
            "[cache] redis_url_env / redis_url_file: not a redis://, rediss:// or unix:// URL"
        )
    options: dict[str, Any] = {
        "socket_timeout": timeout_s,
        "socket_connect_timeout": timeout_s,
        "retry": Retry(NoBackoff(), 0),
        "decode_responses": False,
    }
    try:
        client = Redis.from_url(revealed, **options)
    except (ValueError, TypeError):  # redis-py's message may quote the URL: never pass it on
        raise CacheConfigError(
            "[cache] redis_url_env / redis_url_file: the Redis URL cannot be parsed"
        ) from None
    return RedisLink(
        client, clock=clock, logger=logger, timeout_s=timeout_s, retry_after_s=retry_after_s
    )
