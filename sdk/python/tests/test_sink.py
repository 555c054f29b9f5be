"""Sinks through turnpike.testing: write, flush, assignment, and what the host gets back."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from turnpike import Record, RecordError, Sink  # noqa: E402
from turnpike.testing import assign, create_sink, flush, revoke, write  # noqa: E402


class Store(Sink):
    """Buffers in write, makes durable in flush; rejects empty values for good."""

    def create(self, config):
        self.down = config.get("down", False)
        self.buffer, self.durable, self.events = [], [], []

    def write(self, records):
        if any(r.value == b"busy" for r in records):
            raise RecordError.retriable("the store is busy")
        if any(r.value == b"bug" for r in records):
            raise AttributeError("bug")
        if any(r.value == b"bad index" for r in records):
            return [(len(records), RecordError.invalid("out of range"))]
        rejected = []
        for i, r in enumerate(records):
            if not r.value:
                rejected.append((i, RecordError.invalid(f"empty value at offset {r.offset}")))
            else:
                self.buffer.append((r.topic, r.partition, r.offset, r.value))
        return rejected

    def flush(self):
        if self.down:
            raise RecordError.retriable("the store is down")
        self.durable += self.buffer
        self.buffer = []

    def assigned(self, partitions):
        self.events.append(("assigned", partitions))

    def revoked(self, partitions):
        self.events.append(("revoked", partitions))


class SinkTest(unittest.TestCase):
    def test_write_buffers_flush_makes_durable(self):
        sink = create_sink(Store)
        rejected = write(sink, [Record("a"), Record(""), Record("c", topic="orders", partition=3, offset=70)])
        self.assertEqual(rejected, [(1, RecordError.invalid("empty value at offset 1"))])
        self.assertEqual(sink.durable, [])
        flush(sink)
        self.assertEqual(sink.durable, [("test", 0, 0, b"a"), ("orders", 3, 70, b"c")])

    def test_a_failing_flush_keeps_the_buffer_and_raises_its_kind(self):
        sink = create_sink(Store, {"down": True})
        write(sink, [Record("a")])
        with self.assertRaises(RecordError) as e:
            flush(sink)
        self.assertEqual(e.exception, RecordError.retriable("the store is down"))
        self.assertEqual(sink.buffer, [("test", 0, 0, b"a")])

    def test_a_record_error_from_write_fails_the_batch(self):
        with self.assertRaises(RecordError) as e:
            write(create_sink(Store), [Record("a"), Record("busy")])
        self.assertEqual(e.exception.kind, "retriable")

    def test_exceptions_and_bad_answers_propagate(self):
        with self.assertRaises(AttributeError):
            write(create_sink(Store), [Record("bug")])
        with self.assertRaises(ValueError):
            write(create_sink(Store), [Record("bad index")])

    def test_assignment_callbacks_get_topic_partition_tuples(self):
        sink = create_sink(Store)
        assign(sink, [("orders", 0), ("orders", 1)])
        revoke(sink, [("orders", 1)])
        self.assertEqual(sink.events, [("assigned", [("orders", 0), ("orders", 1)]), ("revoked", [("orders", 1)])])


if __name__ == "__main__":
    unittest.main()
