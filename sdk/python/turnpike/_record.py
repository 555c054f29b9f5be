"""Records: what a transform or sink receives, and what a transform or source makes."""

import json as _json

from ._errors import RecordError


def _bytes(value):
    """Bytes from bytes, text, or a JSON-able value (dict, list, number, bool)."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return _json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class Record:
    """A Kafka record.

    Attributes: ``key`` and ``value`` (bytes, or None for null), ``headers`` (a list of
    ``(name, bytes)`` pairs), ``timestamp`` (ms since the epoch, or None), ``topic``,
    ``partition`` and ``offset`` (where it was read; an output's ``topic`` is where it goes,
    None meaning the connector's output topic).

    ``Record(value, key=..., headers=..., timestamp=..., topic=...)`` makes a new one (a
    transform's extra output, a source's record): ``value`` and ``key`` may be bytes, text or
    a JSON-able value, ``headers`` a list of pairs or a dict.
    """

    _FIELDS = ("key", "value", "headers", "timestamp", "topic", "partition", "offset")
    # `_read_from`: the topic an input record was read from (None for a record made by the
    # plugin), so that an input sent on with that topic goes to the connector's output topic.
    __slots__ = _FIELDS + ("_read_from",)

    def __init__(self, value=None, key=None, headers=None, timestamp=None, topic=None, partition=-1, offset=-1):
        self.key = _bytes(key)
        self.value = _bytes(value)
        pairs = headers.items() if isinstance(headers, dict) else (headers or [])
        self.headers = [(k, _bytes(v)) for k, v in pairs]
        self.timestamp = timestamp
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self._read_from = None

    def text(self):
        """The value as UTF-8 text (RecordError if it is not)."""
        if self.value is None:
            raise RecordError("the value is null")
        try:
            return self.value.decode("utf-8")
        except UnicodeDecodeError as e:
            raise RecordError(f"the value is not UTF-8: {e}") from None

    def json(self):
        """The value parsed as JSON (RecordError if it is not JSON)."""
        try:
            return _json.loads(self.text())
        except ValueError as e:
            raise RecordError(f"the value is not JSON: {e}") from None

    def header(self, name):
        """The first header called ``name``, as bytes, or None."""
        for k, v in self.headers:
            if k == name:
                return v
        return None

    def with_value(self, value):
        """A copy with another value (bytes, text, or a JSON-able value), same key and headers.
        Its topic is left to the connector."""
        return Record(value, self.key, list(self.headers), self.timestamp)

    def __eq__(self, other):
        if not isinstance(other, Record):
            return NotImplemented
        return all(getattr(self, a) == getattr(other, a) for a in self._FIELDS)

    __hash__ = None

    def __repr__(self):
        return f"Record(key={self.key!r}, value={self.value!r}, headers={self.headers!r}, topic={self.topic!r})"

