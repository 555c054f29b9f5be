"""Structured logging into the host's log, as the Rust SDK's ``turnpike_sdk::log`` and the JS
SDK's ``log``::

    from turnpike import log

    log.warn("webhook down, will retry", url=self.url, records=len(self.buffer))

The host adds the connector, plugin name and version to every line and rate-limits each
instance (excess lines are counted and dropped), so a plugin logs only what it knows, and
not once per record at info. Field values become text (``str``; bytes are decoded as UTF-8).

Inside the component a line goes to the ``turnpike:plugin/log`` import (the component glue
plugs it in, so this module imports nothing from the generated bindings and works natively);
natively it is kept for ``turnpike.testing.logged()``. A log call never raises: the contract's
``log`` never fails, and a line that cannot be written is dropped rather than failing a record.
"""

from collections import deque

__all__ = ["LEVELS", "debug", "error", "info", "log", "trace", "warn"]

LEVELS = ("trace", "debug", "info", "warn", "error")

# Lines logged natively, oldest first; bounded so a long native run cannot grow without end.
_lines = deque(maxlen=10_000)


def _keep(level, message, fields):
    _lines.append((level, message, fields))


# What writes a line: the host's import in the component (set by the glue), else _keep.
_sink = _keep


def _text(value):
    """``value`` as the text the host takes; never raises (a broken ``__str__`` included)."""
    try:
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode("utf-8", "replace")
        return str(value)
    except Exception:
        return f"<unprintable {type(value).__name__}>"


def log(level, message, /, **fields):
    """Logs ``message`` at ``level`` (one of ``LEVELS``; anything else is ``info``, as in the
    JS SDK) with ``fields`` as ``(key, text)`` pairs. Never raises."""
    try:
        level = level if level in LEVELS else "info"
        _sink(level, _text(message), [(k, _text(v)) for k, v in fields.items()])
    except Exception:
        pass  # dropped, as the host drops a line it cannot write


def trace(message, /, **fields):
    """Logs at trace level: very detailed."""
    log("trace", message, **fields)


def debug(message, /, **fields):
    """Logs at debug level: for debugging."""
    log("debug", message, **fields)


def info(message, /, **fields):
    """Logs at info level: normal operation."""
    log("info", message, **fields)


def warn(message, /, **fields):
    """Logs at warn level: something looks wrong."""
    log("warn", message, **fields)


def error(message, /, **fields):
    """Logs at error level: something failed."""
    log("error", message, **fields)
