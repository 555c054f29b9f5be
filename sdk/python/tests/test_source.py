"""Sources through turnpike.testing: what poll returns, laid out and read back as the host
would read the source-batch."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from turnpike import ConfigError, Polled, Record, RecordError, Source, emit, emit_unpositioned, fail  # noqa: E402
from turnpike.testing import create_source, poll  # noqa: E402


class Lines(Source):
    """Reads numbered lines; a line that is not a number is reported with ``fail``."""

    LINES = ["1", "2", "x", "4"]

    def create(self, config, position):
        self.at = 0 if position is None else int(position) + 1
        self.mode = config.get("mode")

    def poll(self, max_records):
        if self.mode == "busy":
            raise RecordError.retriable("the file server is busy")
        if self.mode == "bug":
            return {}["bug"]
        if self.mode == "stale":
            raise ConfigError("the file is gone", key="path")
        if self.mode == "greedy":
            return [emit_unpositioned(Record("x"))] * (max_records + 1)
        if self.mode == "raw":
            return [Record("not wrapped")]
        out = []
        while self.at < len(self.LINES) and len(out) < max_records:
            line, position = self.LINES[self.at], str(self.at)
            if line.isdigit():
                out.append(emit(Record({"n": int(line)}, key=line, headers=[("line", position)], timestamp=1000 + self.at), position))
            else:
                out.append(fail(line, position, RecordError.invalid(f"line {self.at} is not a number")))
            self.at += 1
        return out


class SourceTest(unittest.TestCase):
    def test_records_positions_and_failures(self):
        polled = poll(create_source(Lines), max_records=3)
        self.assertEqual([p.record.value for p in polled], [b'{"n":1}', b'{"n":2}', b"x"])
        self.assertEqual([p.position for p in polled], [b"0", b"1", b"2"])
        self.assertEqual([p.error for p in polled], [None, None, RecordError.invalid("line 2 is not a number")])
        first = polled[0].record
        self.assertEqual((first.key, first.headers, first.timestamp, first.topic), (b"1", [("line", b"0")], 1000, None))

    def test_a_stored_position_resumes_right_after_it(self):
        source = create_source(Lines, position="2")
        self.assertEqual([p.position for p in poll(source)], [b"3"])
        self.assertEqual(poll(source), [], "nothing new yet")

    def test_a_record_error_fails_the_poll_with_its_kind(self):
        with self.assertRaises(RecordError) as e:
            poll(create_source(Lines, {"mode": "busy"}))
        self.assertEqual(e.exception, RecordError.retriable("the file server is busy"))
        with self.assertRaises(RecordError) as e:
            poll(create_source(Lines, {"mode": "stale"}))
        self.assertEqual(e.exception.kind, "fatal")

    def test_other_exceptions_propagate(self):
        with self.assertRaises(KeyError):
            poll(create_source(Lines, {"mode": "bug"}))
        with self.assertRaises(ValueError):
            poll(create_source(Lines, {"mode": "greedy"}), max_records=2)
        with self.assertRaises(TypeError):
            poll(create_source(Lines, {"mode": "raw"}))

    def test_the_helpers(self):
        self.assertEqual(emit(Record("v"), "p").position, b"p")
        self.assertEqual(emit(Record("v"), b"\x00").position, b"\x00")
        self.assertIsNone(emit_unpositioned(Record("v")).position)
        failed = fail(b"raw", "9", "unreadable")
        self.assertEqual((failed.record.value, failed.position, failed.error), (b"raw", b"9", RecordError.invalid("unreadable")))
        self.assertEqual(Polled(Record("v"), "p"), emit(Record("v"), "p"))
        for bad in (lambda: emit(Record("v"), None), lambda: emit(Record("v"), 5), lambda: emit("v", "p"), lambda: fail("v", "p", 3)):
            with self.assertRaises(TypeError):
                bad()


if __name__ == "__main__":
    unittest.main()
