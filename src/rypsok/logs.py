"""Structured log lines on standard error (REQ-OBS-005/006, REQ-PRIV-004).

One JSON object per line. Events carry rypsok's own fields only: request ids, tool names,
engine ids, host names that passed the egress policy, timings, counts, outcomes and policy
decisions. Query text and URLs are logged only in the debug mode the operator chose
explicitly (LIM-P3), and never page content or credentials.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Mapping
from typing import Any

LOGGER_NAME = "rypsok"
_FIELDS = "rypsok_fields"


class JsonLineFormatter(logging.Formatter):
    """Render a record as one JSON line: time, level, event, then the event's fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "event": record.getMessage(),
        }
        fields = getattr(record, _FIELDS, None)
        if isinstance(fields, Mapping):
            line.update(fields)
        if record.exc_info and record.exc_info[0] is not None:
            # The exception's class only: its message may quote external text (REQ-ERR-004).
            line["exception"] = record.exc_info[0].__name__
        return json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str)


def configure_logging(level: str) -> logging.Logger:
    """Send rypsok's and the libraries' records to stderr as JSON lines; stdout stays clean."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    # Libraries log at WARNING and above only: their messages may carry URLs or bodies.
    root.setLevel(logging.WARNING)
    logger = logging.getLogger(LOGGER_NAME)
    logger.setLevel(level.upper())
    return logger


def log_event(logger: logging.Logger, level: int, event: str, **fields: object) -> None:
    """Log one event with structured fields."""
    if logger.isEnabledFor(level):
        logger.log(level, event, extra={_FIELDS: fields})
