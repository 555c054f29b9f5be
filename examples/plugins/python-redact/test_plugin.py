import unittest

from turnpike import Record
from turnpike.testing import create, run

from plugin import Redact


class RedactTest(unittest.TestCase):
    def test_redacts_the_field_and_fails_what_is_not_json(self):
        outputs, errors = run(create(Redact, {"field": "email"}), [Record('{"email": "a@b.c", "n": 1}', key="k"), Record("nope")])
        self.assertEqual([(i, r.key, r.value) for i, r in outputs], [(0, b"k", b'{"email":"***","n":1}')])
        self.assertEqual([(i, e.kind) for i, e in errors], [(1, "invalid_record")])

    def test_json_without_the_field_passes(self):
        outputs, _ = run(create(Redact), [Record('{"name": "Ada"}'), Record('"email"'), Record("[1, 2]")])
        self.assertEqual([r.value for _, r in outputs], [b'{"name": "Ada"}', b'"email"', b"[1, 2]"])


if __name__ == "__main__":
    unittest.main()
