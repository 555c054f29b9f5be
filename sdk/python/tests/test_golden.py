"""The golden batches of tests/fixtures/batch through the Python SDK's layout code: decode
input.bin, run the golden rule (README.md there) through a Transform, encode the outputs, and
get output.bin byte for byte. The host, Rust SDK and JS tests hold their layout code to the
same bytes, so a layout change in one language fails the others."""

import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from turnpike import Record, Transform  # noqa: E402
from turnpike._layout import Encoder, decode  # noqa: E402
from turnpike.testing import create, run  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests", "fixtures", "batch")


def read_batch_file(name):
    """The five sections of a fixture file: data, topics, records (u32), wide (s64), headers (u32)."""
    with open(os.path.join(FIXTURES, name), "rb") as f:
        raw = f.read()
    at = 0

    def take(fmt, n=1):
        nonlocal at
        values = struct.unpack_from(f"<{n}{fmt}", raw, at)
        at += struct.calcsize(f"<{n}{fmt}")
        return list(values)

    def count():
        return take("I")[0]

    n = count()
    data = raw[at:at + n]
    at += n
    topics = []
    for _ in range(count()):
        n = count()
        topics.append(raw[at:at + n].decode("utf-8"))
        at += n
    records = take("I", count())
    wide = take("q", count())
    headers = take("I", count())
    if at != len(raw):
        raise ValueError(f"{name}: {len(raw) - at} bytes after the last section")
    return data, topics, records, wide, headers


class Golden(Transform):
    """The golden rule of tests/fixtures/batch/README.md."""

    def process(self, record):
        if record.value == b"drop":
            return None
        outputs = [record.with_value(record.value)]
        if record.header("audit") is not None:
            outputs.append(Record("audited", key=record.key, headers=[("from", record.topic), ("note", b"")], topic="audit"))
        return outputs


class GoldenBatchTest(unittest.TestCase):
    def test_decoding_reads_the_described_records(self):
        data, topics, records, positions, headers = read_batch_file("input.bin")
        got = [(r.topic, r.partition, r.offset, r.timestamp, r.key, r.value, r.headers) for r in decode(data, topics, records, positions, headers)]
        self.assertEqual(
            got,
            [
                ("orders", 0, 41, 1_700_000_000_000, b"k0", b'{"id":1}', [("trace", b"abc"), ("empty", b"")]),
                ("orders", 0, 42, None, None, b"drop", []),
                ("payments", 7, 5_000_000_000, 1_700_000_000_500, "clé".encode(), None, [("audit", b"yes"), ("ünï", b"\xff\x00\xfe")]),
                ("orders", -1, 3, 1_700_000_001_000, b"\x00\xff", "Grüße 🚀".encode(), [("audit", b"")]),
            ],
        )

    def test_the_golden_rule_encodes_to_the_golden_output(self):
        outputs, errors = run(create(Golden), decode(*read_batch_file("input.bin")))
        self.assertEqual(errors, [])
        enc = Encoder()
        for input_index, record in outputs:
            enc.push(input_index, record)
        data, topics, records, timestamps, headers = read_batch_file("output.bin")
        self.assertEqual(enc.topics, topics)
        self.assertEqual(enc.records, records)
        self.assertEqual(enc.timestamps, timestamps)
        self.assertEqual(enc.headers, headers)
        self.assertEqual(bytes(enc.data), data)


if __name__ == "__main__":
    unittest.main()
