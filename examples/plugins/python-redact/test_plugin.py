import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".turnpike", "python"))

from turnpike import Record  # noqa: E402
from turnpike.testing import create, run  # noqa: E402

from plugin import Redact  # noqa: E402


class RedactTest(unittest.TestCase):
    def test_redacts_the_field_and_fails_what_is_not_json(self):
        outputs, errors = run(create(Redact, {"field": "email"}), [Record('{"email": "a@b.c", "n": 1}'), Record("nope")])
        self.assertEqual([r.value for _, r in outputs], [b'{"email":"***","n":1}'])
        self.assertEqual([i for i, _, _ in errors], [1])


if __name__ == "__main__":
    unittest.main()
