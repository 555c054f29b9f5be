"""The batch layout of wit/types.wit, Python side: columns in, columns out."""

from ._record import Record

ABSENT = 0xFFFFFFFF
NO_TIMESTAMP = -(2**63)
INPUT_STRIDE = 8
OUTPUT_STRIDE = 8
HEADER_STRIDE = 4


def decode(data, topics, records, positions, headers):
    """The records of an input batch."""
    out = []
    mv = memoryview(data)

    def span(offset, length):
        return None if length == ABSENT else bytes(mv[offset:offset + length])

    for i in range(len(records) // INPUT_STRIDE):
        ko, kl, vo, vl, first, count, topic, partition = records[i * INPUT_STRIDE:(i + 1) * INPUT_STRIDE]
        hs = []
        for j in range(first, first + count):
            h = headers[j * HEADER_STRIDE:(j + 1) * HEADER_STRIDE]
            hs.append((bytes(mv[h[0]:h[0] + h[1]]).decode("utf-8", "replace"), bytes(mv[h[2]:h[2] + h[3]])))
        ts = positions[i * 2 + 1]
        if partition >= 2**31:
            partition -= 2**32
        out.append(Record(span(vo, vl), span(ko, kl), hs, None if ts == NO_TIMESTAMP else ts, topics[topic], partition, positions[i * 2]))
    return out


class Encoder:
    """Builds the columns of an output batch."""

    def __init__(self):
        self.data = bytearray()
        self.topics = []
        self.records = []
        self.timestamps = []
        self.headers = []

    def _append(self, b):
        if b is None:
            return 0, ABSENT
        offset = len(self.data)
        self.data += b
        return offset, len(b)

    def push(self, input_index, record):
        ko, kl = self._append(record.key)
        vo, vl = self._append(record.value)
        first = len(self.headers) // HEADER_STRIDE
        for k, v in record.headers:
            self.headers.extend(self._append(k.encode("utf-8")))
            self.headers.extend(self._append(v or b""))
        count = len(self.headers) // HEADER_STRIDE - first
        topic = ABSENT
        if record.topic is not None:
            if record.topic not in self.topics:
                self.topics.append(record.topic)
            topic = self.topics.index(record.topic)
        self.records.extend((input_index, ko, kl, vo, vl, first, count, topic))
        self.timestamps.append(NO_TIMESTAMP if record.timestamp is None else record.timestamp)
