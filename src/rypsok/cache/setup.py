"""Build what ``[cache]`` asks for, once per process, at start (REQ-CACHE-001).

* ``enabled = false`` (LIM-K1, the default): no result cache; searches are answered by the
  engines only, and nothing of a query outlives its call.
* ``backend = "memory"``: a :class:`~rypsok.cache.memory.MemoryCache` when enabled.
* ``backend = "redis"``: a :class:`~rypsok.cache.redis_link.RedisLink`, used by the
  :class:`~rypsok.cache.redis_cache.RedisCache` when enabled, and in any case by the invocation
  and provider limits, which several replicas then share (``rypsok.health.shared_window``).
  Sharing limits retains no query, so it does not need the cache to be enabled.

A missing ``redis`` package or an unusable URL reference is a configuration error at start that
names the key. Redis being unreachable is not: a replica starts and degrades until it answers.
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Self

import anyio

from rypsok.cache.base import CacheConfigError, ResultCache
from rypsok.cache.memory import MemoryCache
from rypsok.cache.redis_cache import RedisCache
from rypsok.cache.redis_link import RedisLink, connect
from rypsok.config.schema import CacheSettings
from rypsok.config.secrets import SecretError, resolve
from rypsok.health.clock import Clock
from rypsok.logs import log_event


class CacheBackend:
    """The result cache (None when disabled) and the Redis link (None unless backend = redis).

    An async context manager: leaving it closes both.
    """

    __slots__ = ("cache", "link")

    def __init__(self, cache: ResultCache | None, link: RedisLink | None) -> None:
        self.cache = cache
        self.link = link

    def __repr__(self) -> str:
        return f"CacheBackend(cache={self.cache!r}, link={self.link!r})"

    async def aclose(self) -> None:
        """Drop this process's entries and close the connection, shielded from cancellation."""
        with anyio.CancelScope(shield=True):
            if self.cache is not None:
                await self.cache.aclose()
            if self.link is not None:
                await self.link.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def open_backend(settings: CacheSettings, *, clock: Clock, logger: logging.Logger) -> CacheBackend:
    """The backend of ``settings``; raises :class:`CacheConfigError` naming the key at fault."""
    link: RedisLink | None = None
    cache: ResultCache | None = None
    if settings.backend == "redis":
        try:
            url = resolve(settings.redis_url_env, settings.redis_url_file)
        except SecretError as exc:
            raise CacheConfigError(f"[cache] redis_url_file: {exc}") from None
        if url is None:
            raise CacheConfigError(
                "[cache] redis_url_env / redis_url_file: the reference holds no Redis URL"
            )
        link = connect(url, clock=clock, logger=logger)
        if settings.enabled:
            cache = RedisCache(
                link, key_prefix=settings.key_prefix, max_entries=settings.max_entries
            )
    elif settings.enabled:
        cache = MemoryCache(clock=clock, max_entries=settings.max_entries)
    log_event(
        logger,
        logging.INFO,
        "cache",
        enabled=settings.enabled,
        backend=settings.backend,
        ttl_s=settings.ttl_s if settings.enabled else None,
        shared_limits=link is not None,
    )
    return CacheBackend(cache, link)
