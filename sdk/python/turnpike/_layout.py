"""The batch layout of wit/types.wit and wit/source.wit, Python side.

Writers lay records out exactly as the Rust ``turnpike-batch-layout`` crate does (a record's
key, value, then each header's key and value, and a source record's position last; a null
is the span ``(0, ABSENT)``; topics numbered in order of first use), so that the golden
batches of tests/fixtures/batch hold every SDK to the same bytes. Readers turn columns back
into ``Record``s: the component reads input batches, the native tests read what the writers
wrote, so ``turnpike.testing`` exercises the same layout code the component runs.
"""

from ._record import Record

ABSENT = 0xFFFFFFFF
NO_TIMESTAMP = -(2**63)
INPUT_STRIDE = 8
OUTPUT_STRIDE = 8
SOURCE_STRIDE = 9
HEADER_STRIDE = 4
# Forwarded parts (contract 0.1.4, ``forwarding-transform``): the output's key, value or
# headers are its input's own, and the host copies them from the batch it sent.
FORWARD_KEY = 1
FORWARD_VALUE = 2
FORWARD_HEADERS = 4


def _reader(data, headers):
    """``span(offset, length)`` and ``header_list(first, count)`` over one batch's buffer."""
    mv = memoryview(data)

    def span(offset, length):
        return None if length == ABSENT else bytes(mv[offset:offset + length])

    def header_list(first, count):
        out = []
        for j in range(first, first + count):
            ko, kl, vo, vl = headers[j * HEADER_STRIDE:(j + 1) * HEADER_STRIDE]
            out.append((bytes(mv[ko:ko + kl]).decode("utf-8", "replace"), bytes(mv[vo:vo + vl])))
        return out

    return span, header_list


def _s32(bits):
    """A partition from its ``s32`` bits carried in a ``u32``."""
    return bits - 2**32 if bits >= 2**31 else bits


def _timestamp(ts):
    return None if ts == NO_TIMESTAMP else ts


def decode(data, topics, records, positions, headers):
    """The records of an input batch (what a transform or sink is given)."""
    span, header_list = _reader(data, headers)
    out = []
    for i in range(len(records) // INPUT_STRIDE):
        ko, kl, vo, vl, first, count, topic, partition = records[i * INPUT_STRIDE:(i + 1) * INPUT_STRIDE]
        record = Record(span(vo, vl), span(ko, kl), header_list(first, count), _timestamp(positions[i * 2 + 1]),
                        topics[topic], _s32(partition), positions[i * 2])
        record._read_from = record.topic
        out.append(record)
    return out


def decode_output(data, topics, records, timestamps, headers):
    """``(input_index, Record)`` for each output of an output batch."""
    span, header_list = _reader(data, headers)
    out = []
    for i in range(len(records) // OUTPUT_STRIDE):
        inp, ko, kl, vo, vl, first, count, topic = records[i * OUTPUT_STRIDE:(i + 1) * OUTPUT_STRIDE]
        record = Record(span(vo, vl), span(ko, kl), header_list(first, count), _timestamp(timestamps[i]),
                        None if topic == ABSENT else topics[topic])
        out.append((inp, record))
    return out


def decode_source(data, topics, records, timestamps, headers):
    """``(Record, position)`` for each record of a source batch (position: bytes or None)."""
    span, header_list = _reader(data, headers)
    out = []
    for i in range(len(records) // SOURCE_STRIDE):
        ko, kl, vo, vl, first, count, topic, po, pl = records[i * SOURCE_STRIDE:(i + 1) * SOURCE_STRIDE]
        record = Record(span(vo, vl), span(ko, kl), header_list(first, count), _timestamp(timestamps[i]),
                        None if topic == ABSENT else topics[topic])
        out.append((record, span(po, pl)))
    return out


class _Writer:
    """What every batch writer shares: the data buffer, the topic table, the header column."""

    def __init__(self):
        self.data = bytearray()
        self.topics = []
        self.records = []
        self.headers = []

    def _append(self, b):
        """The span of ``b`` appended to ``data``; ``(0, ABSENT)`` for None."""
        if b is None:
            return 0, ABSENT
        if not isinstance(b, (bytes, bytearray)):
            raise TypeError(f"record bytes must be bytes, not {type(b).__name__}")
        offset = len(self.data)
        self.data += b
        return offset, len(b)

    def _push_headers(self, headers):
        """Appends headers; returns ``(first-header, header-count)``."""
        first = len(self.headers) // HEADER_STRIDE
        for k, v in headers:
            if not isinstance(k, str):
                raise TypeError(f"a header name must be text, not {type(k).__name__}")
            self.headers.extend(self._append(k.encode("utf-8")))
            self.headers.extend(self._append(b"" if v is None else v))
        return first, len(self.headers) // HEADER_STRIDE - first

    def _topic(self, topic):
        """The topic's index, added to the table the first time it is named."""
        if topic not in self.topics:
            self.topics.append(topic)
        return self.topics.index(topic)


class InputWriter(_Writer):
    """Builds an input batch, as the host does (for the native test helpers)."""

    def __init__(self):
        super().__init__()
        self.positions = []

    def push(self, record, topic, partition, offset):
        ko, kl = self._append(record.key)
        vo, vl = self._append(record.value)
        first, count = self._push_headers(record.headers)
        self.records.extend((ko, kl, vo, vl, first, count, self._topic(topic), partition & 0xFFFFFFFF))
        self.positions.extend((offset, NO_TIMESTAMP if record.timestamp is None else record.timestamp))

    def columns(self):
        return bytes(self.data), self.topics, self.records, self.positions, self.headers


class OutputWriter(_Writer):
    """Builds the columns of an output batch (what a transform returns)."""

    def __init__(self):
        super().__init__()
        self.timestamps = []
        # One flag word per output (``FORWARD_*``), for the ``forwarding-transform`` export.
        self.forwarded = []

    def push(self, input_index, record, forwarded=False, parts=0):
        """``forwarded``: an input record sent on with the topic it was read from goes to the
        connector's output topic (as Rust's ``forward``), not back to its input. ``parts``
        (``FORWARD_*`` flags): the parts that are the input's own, left out of ``data``."""
        ko, kl = (0, ABSENT) if parts & FORWARD_KEY else self._append(record.key)
        vo, vl = (0, ABSENT) if parts & FORWARD_VALUE else self._append(record.value)
        first, count = (len(self.headers) // HEADER_STRIDE, 0) if parts & FORWARD_HEADERS else self._push_headers(record.headers)
        topic = ABSENT if record.topic is None or forwarded else self._topic(record.topic)
        self.records.extend((input_index, ko, kl, vo, vl, first, count, topic))
        self.timestamps.append(NO_TIMESTAMP if record.timestamp is None else record.timestamp)
        self.forwarded.append(parts)

    def columns(self):
        return bytes(self.data), self.topics, self.records, self.timestamps, self.headers


class SourceWriter(_Writer):
    """Builds the columns of a source batch (what a source's poll returns): nine ``u32``s
    per record, its position span last, its position bytes after its headers."""

    def __init__(self):
        super().__init__()
        self.timestamps = []

    def __len__(self):
        return len(self.records) // SOURCE_STRIDE

    def push(self, record, position):
        ko, kl = self._append(record.key)
        vo, vl = self._append(record.value)
        first, count = self._push_headers(record.headers)
        topic = ABSENT if record.topic is None else self._topic(record.topic)
        po, pl = self._append(position)
        self.records.extend((ko, kl, vo, vl, first, count, topic, po, pl))
        self.timestamps.append(NO_TIMESTAMP if record.timestamp is None else record.timestamp)

    def columns(self):
        return bytes(self.data), self.topics, self.records, self.timestamps, self.headers
