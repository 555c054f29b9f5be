"""The Python SDK's logic, natively: python3 -m unittest discover -s sdk/python/tests"""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from turnpike import ConfigError, Record, RecordError, Transform  # noqa: E402
from turnpike._layout import ABSENT, Encoder, decode  # noqa: E402
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

    def test_layout_round_trip(self):
        enc = Encoder()
        enc.push(0, Record(b"v0", key=None, headers=[("h", b"x")], timestamp=5))
        enc.push(1, Record(b"v1", key=b"k1", topic="other"))
        self.assertEqual(enc.records[:8], [0, 0, ABSENT, 0, 2, 0, 1, ABSENT])
        self.assertEqual(enc.topics, ["other"])
        # Read the outputs back as if they were inputs (same spans, input layout).
        rows = []
        for i in range(2):
            r = enc.records[i * 8:(i + 1) * 8]
            rows += [r[1], r[2], r[3], r[4], r[5], r[6], 0, 3]
        back = decode(bytes(enc.data), ["t"], rows, [7, 5, 8, -(2**63)], enc.headers)
        self.assertEqual([(r.key, r.value, r.headers, r.timestamp, r.offset, r.partition) for r in back], [(None, b"v0", [("h", b"x")], 5, 7, 3), (b"k1", b"v1", [], None, 8, 3)])


if __name__ == "__main__":
    unittest.main()
