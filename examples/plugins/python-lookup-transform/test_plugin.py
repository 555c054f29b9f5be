import unittest

from turnpike import ConfigError, Record, RecordError
from turnpike.http import HttpError, Response
from turnpike.testing import clear_http, create, respond_http, run

from plugin import Lookup

CUSTOMERS = {"c1": {"name": "Ada", "tier": "gold"}}


def service(request):
    """A customer service: /customers/KEY answers the customer as JSON, or 404."""
    key = request.url.rsplit("/", 1)[1]
    if key == "down":
        return Response(503)
    if key == "slow":
        raise HttpError("ErrorCode::ConnectionReadTimeout")
    return Response(200, body=CUSTOMERS[key]) if key in CUSTOMERS else Response(404)


class LookupTest(unittest.TestCase):
    def setUp(self):
        respond_http(service)
        self.addCleanup(clear_http)
        self.lookup = create(Lookup, {"url": "https://crm.example.com/customers/", "field": "customer"})

    def test_the_answer_goes_under_the_field(self):
        outputs, errors = run(self.lookup, [Record('{"order": 1}', key="c1")])
        self.assertEqual(errors, [])
        self.assertEqual(outputs[0][1].json(), {"order": 1, "customer": {"name": "Ada", "tier": "gold"}})
        self.assertEqual(outputs[0][1].key, b"c1")

    def test_a_404_passes_the_record_unchanged(self):
        outputs, errors = run(self.lookup, [Record('{"order": 2}', key="c9")])
        self.assertEqual(([r.value for _, r in outputs], errors), ([b'{"order": 2}'], []))

    def test_failures_are_retriable_and_bad_records_invalid(self):
        records = [Record("{}", key="down"), Record("{}", key="slow"), Record("not json", key="c1"), Record("{}")]
        _, errors = run(self.lookup, records)
        self.assertEqual([(i, e.kind) for i, e in errors], [(0, "retriable"), (1, "retriable"), (2, "invalid_record"), (3, "invalid_record")])

    def test_a_refused_request_is_fatal_with_the_hosts_reason(self):
        clear_http()  # no responder: refused, as on a connector without an http.allow grant
        _, [(index, error)] = run(self.lookup, [Record("{}", key="c1")])
        self.assertEqual(error, RecordError.fatal("no HTTP responder installed (turnpike.testing.respond_http)"))

    def test_config_is_checked(self):
        for config, key in [({}, "url"), ({"url": "crm.example.com"}, "url"), ({"url": "http://x", "field": ""}, "field")]:
            with self.subTest(config=config), self.assertRaises(ConfigError) as e:
                create(Lookup, config)
            self.assertEqual(e.exception.key, key)


if __name__ == "__main__":
    unittest.main()
