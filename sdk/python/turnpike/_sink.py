"""The per-call paths of a sink, independent of WebAssembly: the component and
``turnpike.testing`` both run them."""

from ._errors import ConfigError, RecordError
from ._transform import fatal_from


def _checked(rejected, count):
    """``write``'s answer as ``[(index, RecordError)]``. A malformed answer is a bug in the
    plugin (a fault), not something to guess about."""
    if rejected is None:
        return []
    out = []
    for item in rejected:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], RecordError)):
            raise TypeError(f"write returned {item!r}; return None or a list of (index, RecordError)")
        index = item[0]
        if not isinstance(index, int) or not 0 <= index < count:
            raise ValueError(f"write rejected index {index!r}; the batch has {count} records")
        out.append((index, item[1]))
    return out


def _call(method, *args):
    """Calls a sink method; a ConfigError becomes a fatal RecordError, the rest propagates."""
    try:
        return method(*args)
    except ConfigError as e:
        raise fatal_from(e) from e


def run_write(sink, records):
    """Writes one batch. Returns the rejected records as ``(index, RecordError)``; a
    RecordError raised by ``write`` fails the batch and propagates."""
    return _checked(_call(sink.write, records), len(records))


def run_flush(sink):
    """Flushes. A RecordError raised by ``flush`` propagates (the host retries or stops)."""
    _call(sink.flush)


def pairs(partitions):
    """Partitions as ``(topic, partition)`` tuples, from tuples or objects with those fields."""
    return [p if isinstance(p, tuple) else (p.topic, p.partition) for p in partitions]
