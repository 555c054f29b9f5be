"""turnpike.log natively: lines kept for turnpike.testing.logged(), fields as text, never a raise."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from turnpike import Record, Transform, log  # noqa: E402
from turnpike.testing import clear_log, create, logged, run  # noqa: E402


class Noisy(Transform):
    def create(self, config):
        self.field = config.get("field", "email")
        log.debug("created", field=self.field)

    def transform(self, record):
        log.info("redacting", field=self.field, offset=record.offset)
        return record


class Unprintable:
    def __str__(self):
        raise RuntimeError("no text")


class LogTest(unittest.TestCase):
    def setUp(self):
        clear_log()
        self.addCleanup(clear_log)

    def test_every_level_is_kept_in_order_with_its_fields_as_text(self):
        log.trace("t")
        log.debug("d", n=1)
        log.info("i", ok=True, none=None)
        log.warn("w", raw=b"caf\xc3\xa9", bad=b"\xff")
        log.error("e", err=ValueError("boom"))
        self.assertEqual(logged(), [
            ("trace", "t", []),
            ("debug", "d", [("n", "1")]),
            ("info", "i", [("ok", "True"), ("none", "None")]),
            ("warn", "w", [("raw", "café"), ("bad", "\ufffd")]),
            ("error", "e", [("err", "boom")]),
        ])
        clear_log()
        self.assertEqual(logged(), [])

    def test_a_plugin_logs_through_the_testing_helpers(self):
        run(create(Noisy, {"field": "name"}), [Record("{}"), Record("{}")])
        self.assertEqual(logged(), [
            ("debug", "created", [("field", "name")]),
            ("info", "redacting", [("field", "name"), ("offset", "0")]),
            ("info", "redacting", [("field", "name"), ("offset", "1")]),
        ])

    def test_fields_may_be_named_level_or_message(self):
        log.log("warn", "m", level="x", message="y")
        self.assertEqual(logged(), [("warn", "m", [("level", "x"), ("message", "y")])])

    def test_a_log_call_never_raises(self):
        log.log("loud", "unknown level")
        log.info(Unprintable(), value=Unprintable())
        self.assertEqual(logged(), [
            ("info", "unknown level", []),
            ("info", "<unprintable Unprintable>", [("value", "<unprintable Unprintable>")]),
        ])

        def broken(level, message, fields):
            raise RuntimeError("host gone")

        self.addCleanup(setattr, log, "_sink", log._sink)
        log._sink = broken
        log.error("dropped")  # no exception
