"""The golden batches of tests/fixtures/batch through the Python SDK's layout code: decode
input.bin, run the golden rule (README.md there) through a Transform, encode the outputs, and
get output.bin byte for byte. The host, Rust SDK and JS tests hold their layout code to the
same bytes, so a layout change in one language fails the others.

There is no golden file for source batches; the source writer is held instead to the columns
the layout crate's own test expects (``a_source_record_keeps_its_position_after_its_headers``
in sdk/batch-layout/src/writer.rs), and the input writer (used by turnpike.testing) to
input.bin."""

import os
import struct
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from turnpike import Record, Transform  # noqa: E402
from turnpike._layout import ABSENT, InputWriter, SourceWriter, decode, decode_source  # noqa: E402
from turnpike._transform import run_batch  # noqa: E402
from turnpike.testing import create  # noqa: E402

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

    def transform(self, record):
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
        writer, errors = run_batch(create(Golden), decode(*read_batch_file("input.bin")))
        self.assertEqual(errors, [])
        self.assertEqual(writer.columns(), tuple(read_batch_file("output.bin")))

    def test_the_input_writer_lays_the_records_out_byte_for_byte(self):
        records = decode(*read_batch_file("input.bin"))
        writer = InputWriter()
        for r in records:
            writer.push(r, r.topic, r.partition, r.offset)
        self.assertEqual(writer.columns(), tuple(read_batch_file("input.bin")))


class SourceBatchTest(unittest.TestCase):
    def test_a_source_record_keeps_its_position_after_its_headers(self):
        """The layout crate's test, same records, same columns."""
        w = SourceWriter()
        w.push(Record(None, key=b"k", headers=[("h", b"v")], timestamp=3, topic="side"), b"p")
        w.push(Record(None, key=b"k", timestamp=3), None)
        data, topics, records, timestamps, headers = w.columns()
        self.assertEqual(data, b"khvpk")
        self.assertEqual(records[:9], [0, 1, 0, ABSENT, 0, 1, 0, 3, 1])
        self.assertEqual(records[9:], [4, 1, 0, ABSENT, 1, 0, ABSENT, 0, ABSENT])
        self.assertEqual((topics, timestamps, headers), (["side"], [3, 3], [1, 1, 2, 1]))

    def test_decoding_reads_back_what_was_encoded(self):
        made = [
            (Record("v", key="clé", headers=[("a", b"1"), ("ünï", b"\xff\x00")], timestamp=1_700_000_000_000, topic="side"), b"pos-1"),
            (Record(None), None),
            (Record(b"", key=b"", headers=[("e", b"")], topic="other"), b""),
            (Record("again", topic="side"), "pos-4".encode()),
        ]
        w = SourceWriter()
        for record, position in made:
            w.push(record, position)
        self.assertEqual(len(w), 4)
        data, topics, records, timestamps, headers = w.columns()
        self.assertEqual(topics, ["side", "other"])
        self.assertEqual(len(records), 9 * 4)
        self.assertEqual(decode_source(*w.columns()), made)


if __name__ == "__main__":
    unittest.main()
