"""The Python SDK's logic, natively: python3 -m unittest discover -s sdk/python/tests"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from turnpike import ConfigError, Record, RecordError, Transform  # noqa: E402
from turnpike.testing import create, run  # noqa: E402


class Mask(Transform):
    def create(self, config):
        if "field" not in config:
            raise ConfigError("say which field to mask", key="field")
        self.field = config["field"]

    def process(self, record):
        data = record.json()
        if data.get("drop"):
            return None
        if data.get("retry"):
            raise RecordError("busy", kind="retriable")
        data[self.field] = "***"
        return [record.with_value(data), Record("audit", topic="audit")] if data.get("audit") else record.with_value(data)


class SdkTest(unittest.TestCase):
    def test_outputs_drops_and_errors(self):
        plugin = create(Mask, {"field": "email"})
        inputs = [Record('{"email":"a@b"}', key="k"), Record('{"drop":true}'), Record("not json"), Record('{"retry":1}'), Record('{"audit":1,"email":"x"}')]
        outputs, errors = run(plugin, inputs)
        self.assertEqual([(i, r.value) for i, r in outputs], [(0, b'{"email":"***"}'), (4, b'{"audit":1,"email":"***"}'), (4, b"audit")])
        self.assertEqual(outputs[0][1].key, b"k")
        self.assertEqual([(i, kind) for i, kind, _ in errors], [(2, "invalid"), (3, "retriable")])
        self.assertIn("not JSON", errors[0][2])

    def test_config_errors_name_the_key(self):
        with self.assertRaises(ConfigError) as e:
            create(Mask, {})
        self.assertEqual(e.exception.key, "field")


if __name__ == "__main__":
    unittest.main()
