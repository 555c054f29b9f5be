"""Transforms, errors and records, natively: python3 -m unittest discover -s sdk/python/tests"""

import copy
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from turnpike import FATAL, INVALID_RECORD, RETRIABLE, ConfigError, Record, RecordError, Transform  # noqa: E402
from turnpike.testing import create, run  # noqa: E402


class Mask(Transform):
    def create(self, config):
        if "field" not in config:
            raise ConfigError("say which field to mask", key="field")
        self.field = config["field"]

    def transform(self, record):
        data = record.json()
        if data.get("drop"):
            return None
        if data.get("retry"):
            raise RecordError.retriable("busy")
        if data.get("bug"):
            return data["no such key"]
        if data.get("stale"):
            raise ConfigError("the lookup table is gone", key="table")
        if data.get("wrong"):
            return "not a record"
        data[self.field] = "***"
        return [record.with_value(data), Record("audit", topic="audit")] if data.get("audit") else record.with_value(data)


class TransformTest(unittest.TestCase):
    def test_outputs_drops_and_errors(self):
        plugin = create(Mask, {"field": "email"})
        inputs = [Record('{"email":"a@b"}', key="k"), Record('{"drop":true}'), Record("not json"), Record('{"retry":1}'), Record('{"audit":1,"email":"x"}')]
        outputs, errors = run(plugin, inputs)
        self.assertEqual([(i, r.value, r.topic) for i, r in outputs], [(0, b'{"email":"***"}', None), (4, b'{"audit":1,"email":"***"}', None), (4, b"audit", "audit")])
        self.assertEqual(outputs[0][1].key, b"k")
        self.assertEqual([(i, e.kind) for i, e in errors], [(2, INVALID_RECORD), (3, RETRIABLE)])
        self.assertIn("not JSON", errors[0][1].message)
        self.assertEqual(errors[1][1], RecordError.retriable("busy"))

    def test_an_input_sent_on_goes_to_the_output_topic_unless_rerouted(self):
        class Passing(Transform):
            earlier = None

            def transform(self, record):
                if record.key == b"route":
                    record.topic = "elsewhere"
                if record.key == b"copy":
                    return [copy.copy(record), self.earlier]
                self.earlier = self.earlier or record
                return record

        records = [Record("a", key="keep", topic="orders"), Record("b", key="route", topic="orders"), Record("c", key="copy", topic="orders")]
        outputs, _ = run(create(Passing), records)
        self.assertEqual([(r.key, r.topic) for _, r in outputs], [(b"keep", None), (b"route", "elsewhere"), (b"copy", None), (b"keep", None)])

    def test_an_uncaught_exception_is_a_fault_not_a_bad_record(self):
        with self.assertRaises(KeyError):
            run(create(Mask, {"field": "x"}), [Record("{}"), Record('{"bug":1}')])

    def test_returning_something_else_than_records_is_a_fault(self):
        with self.assertRaises(TypeError):
            run(create(Mask, {"field": "x"}), [Record('{"wrong":1}')])

    def test_a_config_error_while_transforming_fails_the_batch_as_fatal(self):
        with self.assertRaises(RecordError) as e:
            run(create(Mask, {"field": "x"}), [Record("{}"), Record('{"stale":1}')])
        self.assertEqual(e.exception, RecordError.fatal("table: the lookup table is gone"))

    def test_config_errors_name_the_key(self):
        with self.assertRaises(ConfigError) as e:
            create(Mask, {})
        self.assertEqual(e.exception.key, "field")

    def test_config_is_json_text_or_a_dict(self):
        self.assertEqual(create(Mask, '{"field": "f"}').field, "f")
        for bad in ("[1]", "{nope"):
            with self.subTest(bad=bad), self.assertRaises(ConfigError):
                create(Mask, bad)

    def test_any_exception_in_create_is_a_config_error(self):
        class Broken(Transform):
            def create(self, config):
                config["missing"]

        with self.assertRaises(ConfigError) as e:
            create(Broken)
        self.assertEqual((e.exception.key, e.exception.message), (None, "KeyError: 'missing'"))
        self.assertIsInstance(e.exception.__cause__, KeyError)

    def test_a_transform_is_not_created_as_another_kind(self):
        from turnpike.testing import create_sink

        with self.assertRaises(TypeError):
            create_sink(Mask, {"field": "x"})


class ErrorsAndRecordsTest(unittest.TestCase):
    def test_error_kinds(self):
        self.assertEqual((INVALID_RECORD, RETRIABLE, FATAL), ("invalid_record", "retriable", "fatal"))
        self.assertEqual(RecordError("x").kind, INVALID_RECORD)
        self.assertEqual([RecordError.invalid("x").kind, RecordError.retriable("x").kind, RecordError.fatal("x").kind], [INVALID_RECORD, RETRIABLE, FATAL])
        self.assertEqual(RecordError("x", kind=FATAL), RecordError.fatal("x"))
        self.assertNotEqual(RecordError.fatal("x"), RecordError.retriable("x"))
        with self.assertRaises(ValueError):
            RecordError("x", kind="invalid")
        self.assertEqual(str(ConfigError("too big", key="limit")), "limit: too big")

    def test_records_take_bytes_text_and_json(self):
        r = Record({"a": 1}, key="k", headers={"h": "v"}, timestamp=5, topic="t")
        self.assertEqual((r.value, r.key, r.headers, r.timestamp, r.topic), (b'{"a":1}', b"k", [("h", b"v")], 5, "t"))
        self.assertEqual(r.json(), {"a": 1})
        self.assertEqual(r.header("h"), b"v")
        copy = r.with_value("x")
        self.assertEqual((copy.value, copy.key, copy.timestamp, copy.topic), (b"x", b"k", 5, None))
        with self.assertRaises(RecordError):
            Record(None).text()


if __name__ == "__main__":
    unittest.main()
