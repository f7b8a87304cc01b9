"""A worker whose job handler obeys commands written in the body, to simulate hostile pages.

The loop, limits and protocol are the production ones (:func:`rypsok.fetch.worker.main`); only
the handler differs. A body that starts with ``HOSTILE:`` runs a command:

* ``HOSTILE:exit`` ends the process at once (a crash);
* ``HOSTILE:allocate:<bytes>`` allocates that much memory (beyond RLIMIT_AS: MemoryError);
* ``HOSTILE:spin`` burns CPU forever (ended by the parent's timeout or RLIMIT_CPU);
* ``HOSTILE:sleep:<seconds>[:<padding>]`` sleeps, then answers like a text page naming its
  process id (the padding makes the body as big as a test needs);
* ``HOSTILE:print`` writes to standard output, then answers;
* ``HOSTILE:limits`` answers with the limits the worker runs under;
* ``HOSTILE:garbage`` answers with a payload that is not a valid reply.

Any other body goes to the production pipeline.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from typing import Any

from rypsok.fetch.worker import Handler, main


def _text(content: str) -> bytes:
    """A valid reply: the production pipeline's answer for a text/plain body."""
    from rypsok.fetch import pipeline

    return pipeline.handle(
        {"content_type": "text/plain", "url": "https://x.invalid/"}, content.encode("utf-8")
    )


def _load() -> Handler:
    from rypsok.fetch import pipeline

    pipeline.warm_up()

    def handle(job: dict[str, Any], body: bytearray) -> bytes:
        if not body.startswith(b"HOSTILE:"):
            return pipeline.handle(job, body)
        command, _, argument = body[len(b"HOSTILE:") :].decode().partition(":")
        if command == "exit":
            os._exit(3)
        if command == "allocate":
            hog = bytearray(int(argument))
            return _text(f"allocated {len(hog)}")
        if command == "spin":
            while True:
                pass
        if command == "sleep":
            time.sleep(float(argument.split(":")[0]))  # anything after a second ":" is padding
            return _text(f"pid {os.getpid()}")
        if command == "print":
            print("garbage that must never reach the wire")
            sys.stdout.flush()
            return _text("printed")
        if command == "limits":
            limits = {
                "as": resource.getrlimit(resource.RLIMIT_AS),
                "cpu": resource.getrlimit(resource.RLIMIT_CPU),
                "core": resource.getrlimit(resource.RLIMIT_CORE),
                "fsize": resource.getrlimit(resource.RLIMIT_FSIZE),
            }
            return _text(json.dumps(limits))
        if command == "garbage":
            return b'{"status": "ok", "content": 12}'
        raise ValueError("unknown command")

    return handle


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:], load=_load))
