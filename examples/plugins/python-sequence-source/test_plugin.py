import unittest

from turnpike import ConfigError
from turnpike.testing import create_source, poll

from plugin import Sequence


class SequenceTest(unittest.TestCase):
    def test_counts_from_zero_with_each_number_as_its_position(self):
        source = create_source(Sequence, {"name": "orders"})
        polled = poll(source, max_records=3)
        self.assertEqual([p.record.value for p in polled], [b'{"n":0,"source":"orders"}', b'{"n":1,"source":"orders"}', b'{"n":2,"source":"orders"}'])
        self.assertEqual([p.record.key for p in polled], [b"0", b"1", b"2"])
        self.assertEqual([p.position for p in polled], [b"0", b"1", b"2"])
        self.assertEqual(poll(source, max_records=1)[0].position, b"3")

    def test_resumes_right_after_the_stored_position(self):
        polled = poll(create_source(Sequence, {"name": "orders"}, position=b"41"), max_records=1)
        self.assertEqual(polled[0].record.json(), {"n": 42, "source": "orders"})

    def test_per_poll_and_limit_bound_what_it_emits(self):
        source = create_source(Sequence, {"name": "s", "per_poll": 2, "limit": 3})
        self.assertEqual([p.position for p in poll(source)], [b"0", b"1"])
        self.assertEqual([p.position for p in poll(source)], [b"2"])
        self.assertEqual(poll(source), [])
        self.assertEqual(poll(create_source(Sequence, {"name": "s", "limit": 3}, position="2")), [])

    def test_bad_config_is_refused_at_its_key(self):
        for config, key in [({}, "name"), ({"name": 7}, "name"), ({"name": "s", "limit": -1}, "limit"),
                            ({"name": "s", "per_poll": 0}, "per_poll"), ({"name": "s", "per_pol": 5}, "per_pol")]:
            with self.subTest(config=config), self.assertRaises(ConfigError) as e:
                create_source(Sequence, config)
            self.assertEqual(e.exception.key, key)

    def test_a_foreign_position_is_refused(self):
        with self.assertRaises(ConfigError):
            create_source(Sequence, {"name": "s"}, position=b"not a number")


if __name__ == "__main__":
    unittest.main()
