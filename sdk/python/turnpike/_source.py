"""What a source's ``poll`` returns, and the per-poll path (independent of WebAssembly).

``poll`` returns a list of ``Polled`` items, made with the three helpers below, as the Rust
SDK's ``Polled::emit``, ``emit_unpositioned`` and ``fail``. The items are laid out in a
``source-batch`` (wit/source.wit) by ``run_poll``, which the component and
``turnpike.testing.poll`` share.
"""

from ._errors import ConfigError, RecordError
from ._layout import SourceWriter
from ._record import Record
from ._transform import fatal_from


def _position(position):
    """A position as bytes: text is encoded as UTF-8."""
    if isinstance(position, str):
        return position.encode("utf-8")
    if isinstance(position, (bytes, bytearray, memoryview)):
        return bytes(position)
    raise TypeError(f"a position is bytes or text, not {type(position).__name__} (emit_unpositioned for none)")


class Polled:
    """One item of a poll: a record, the position after it (bytes, or None when it does not
    move the position) and, for a record reported with ``fail``, the error."""

    __slots__ = ("record", "position", "error")

    def __init__(self, record, position=None, error=None):
        if not isinstance(record, Record):
            raise TypeError(f"a polled record must be a turnpike.Record, not {type(record).__name__}")
        self.record = record
        self.position = None if position is None else _position(position)
        self.error = error

    def __eq__(self, other):
        if not isinstance(other, Polled):
            return NotImplemented
        return (self.record, self.position, self.error) == (other.record, other.position, other.error)

    __hash__ = None

    def __repr__(self):
        return f"Polled({self.record!r}, position={self.position!r}, error={self.error!r})"


def emit(record, position):
    """A record; ``position`` (bytes or text) is where the source stands after it."""
    if position is None:
        raise TypeError("emit needs a position; use emit_unpositioned for a record that does not move it")
    return Polled(record, position)


def emit_unpositioned(record):
    """A record that does not move the position (a later record of the poll will)."""
    return Polled(record)


def fail(raw, position, error):
    """Something read that is not a good record (a line that does not parse). ``raw`` is what
    was read (a Record, or bytes/text taken as its value): the host dead-letters it unchanged
    (or stops, per the connector's error policy) instead of producing it. The position still
    moves past it. ``error`` is a RecordError, or text for ``RecordError.invalid``."""
    if position is None:
        raise TypeError("fail needs a position: the source has read past the bad record")
    if not isinstance(raw, Record):
        raw = Record(raw)
    if isinstance(error, str):
        error = RecordError.invalid(error)
    if not isinstance(error, RecordError):
        raise TypeError(f"fail takes a RecordError or text, not {type(error).__name__}")
    return Polled(raw, position, error)


def run_poll(source, max_records):
    """Polls ``source`` once. Returns ``(writer, errors)``: the records laid out in a
    ``SourceWriter``, the failed ones as ``(index, RecordError)``.

    A RecordError (or a ConfigError, as a fatal one) raised by ``poll`` fails the poll and
    propagates as a RecordError; any other exception is a fault and propagates as it is.
    """
    try:
        items = source.poll(max_records)
    except ConfigError as e:
        raise fatal_from(e) from e
    items = list(items or [])
    if len(items) > max_records:
        raise ValueError(f"poll returned {len(items)} records; max_records was {max_records}")
    writer = SourceWriter()
    errors = []
    for i, item in enumerate(items):
        if not isinstance(item, Polled):
            raise TypeError(f"poll returned a {type(item).__name__}; make each item with emit, emit_unpositioned or fail")
        writer.push(item.record, item.position)
        if item.error is not None:
            errors.append((i, item.error))
    return writer, errors
