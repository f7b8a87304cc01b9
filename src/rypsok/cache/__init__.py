"""The web_search result cache (REQ-CACHE-001..007), off by default.

Only web_search results are cached, one engine's answer per entry, and only for engines whose
admission record allows storage (REQ-CMP-007); fetched content never is (REQ-CACHE-002): this
package offers nothing to web_fetch. A cache keyed by query is retention of queries for the
entry lifetime (REQ-CACHE-007); enabling it is the operator's choice, documented in
docs/cache.md. The package is core: it imports no MCP SDK and no web framework (REQ-ARCH-005).
"""

from rypsok.cache.base import MAX_VALUE_BYTES, CacheConfigError, ResultCache
from rypsok.cache.codec import decode_results, encode_results
from rypsok.cache.keys import KeyScope, generation_of, result_key
from rypsok.cache.memory import MemoryCache
from rypsok.cache.redis_cache import RedisCache
from rypsok.cache.redis_link import RedisLink, StoreUnavailable, connect
from rypsok.cache.setup import CacheBackend, open_backend

__all__ = [
    "MAX_VALUE_BYTES",
    "CacheBackend",
    "CacheConfigError",
    "KeyScope",
    "MemoryCache",
    "RedisCache",
    "RedisLink",
    "ResultCache",
    "StoreUnavailable",
    "connect",
    "decode_results",
    "encode_results",
    "generation_of",
    "open_backend",
    "result_key",
]
