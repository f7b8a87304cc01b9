"""Serving over stdio (REQ-MCP-002, REQ-OPS-002).

stdout carries MCP messages only: the SDK diverts fd 1 to stderr while serving, and rypsok
writes nothing to stdout before. End of stdin ends the server loop; SIGTERM and SIGINT cancel
it (the SDK's default SIGTERM handling kills without cleanup). Either way in-flight calls are
cancelled, their outbound work aborted, and the process exits within LIM-O1.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server

from rypsok.logs import log_event

# The SDK reads stdin in a worker thread that cancellation cannot interrupt; after a signal the
# calls are cancelled at once, and the process leaves by itself within LIM-O1 (2 s) even if
# that read is still blocked.
EXIT_AFTER_SIGNAL_S = 1.5


def _exit_soon() -> None:
    def leave() -> None:
        logging.shutdown()
        sys.stderr.flush()
        os._exit(0)

    timer = threading.Timer(EXIT_AFTER_SIGNAL_S, leave)
    timer.daemon = True
    timer.start()


async def serve_stdio(
    server: Server[Any],
    logger: logging.Logger,
    warm_up: Callable[[], Coroutine[Any, Any, None]] | None = None,
) -> None:
    """Serve one stdio connection until end of input or a termination signal.

    ``warm_up`` runs beside the connection from the start, so the host's first messages are
    answered without waiting for the core to load.
    """
    async with anyio.create_task_group() as group:

        async def watch_signals() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for signum in signals:
                    log_event(logger, logging.INFO, "shutdown", cause=signal.Signals(signum).name)
                    group.cancel_scope.cancel()
                    _exit_soon()
                    return

        group.start_soon(watch_signals)
        if warm_up is not None:
            group.start_soon(warm_up)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        log_event(logger, logging.INFO, "shutdown", cause="end_of_input")
        group.cancel_scope.cancel()
