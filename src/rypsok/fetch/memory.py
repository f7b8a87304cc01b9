"""Big buffers go back to the system when they are freed (REQ-PERF-003).

glibc's malloc serves a block from its own memory mapping, unmapped on free, only above a
threshold that it raises, by default, to the size of the largest such block freed so far (up
to 32 MiB). After the first 4 MiB body is freed, the next bodies, their decoded text and the
replies of the workers come from the heap, where freed space stays resident when anything
above it is still in use: the process's resident memory then follows the high-water mark of
all the bodies it ever held at once, not the bodies it holds. A fixed threshold of 1 MiB keeps
every body-sized buffer in its own mapping (measured on 8 fetches of 4 MiB pages at once: 72 to
79 MiB above the idle process without it, 52 to 55 MiB with it). Blocks under 1 MiB, which is
everything a search or a small page allocates, are served as before.

Linux with glibc only; elsewhere :func:`release_large_blocks` does nothing.
"""

from __future__ import annotations

import ctypes
import functools
import sys
from typing import Any

MMAP_THRESHOLD_BYTES = 1024 * 1024
TRIM_AFTER_BYTES = 1024 * 1024  # callers trim after letting go of a body or reply this big
_M_MMAP_THRESHOLD = -3  # glibc's <malloc.h>


def release_large_blocks() -> bool:
    """Serve blocks of at least MMAP_THRESHOLD_BYTES from mappings unmapped on free.

    Process-wide and idempotent; returns whether the C library accepted it.
    """
    mallopt = _libc_function("mallopt", (ctypes.c_int, ctypes.c_int))
    return mallopt is not None and bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def trim() -> bool:
    """Return the free pages inside the C heap to the system (glibc's ``malloc_trim(0)``).

    Blocks under the threshold (the chunks a body is received in, the small objects of a
    decoded reply) leave free holes in the heap that stay resident; called after a big body or
    reply has been let go of, this hands those pages back. Returns whether anything was freed.
    """
    malloc_trim = _libc_function("malloc_trim", (ctypes.c_size_t,))
    return malloc_trim is not None and bool(malloc_trim(0))


@functools.cache
def _libc_function(name: str, argtypes: tuple[Any, ...]) -> Any:
    """A function of the C library (looked up once), or None where there is no such one."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    function.argtypes = argtypes
    function.restype = ctypes.c_int
    return function
