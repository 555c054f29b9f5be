import json
import unittest

from turnpike import ConfigError, Record, RecordError
from turnpike.http import HttpError, Response
from turnpike.testing import clear_http, create_sink, flush, respond_http, write

from plugin import Webhook

URL = "https://hooks.example.com/in"


class WebhookTest(unittest.TestCase):
    def setUp(self):
        self.sent = []
        self.answer = Response(204)
        respond_http(self.respond)
        self.addCleanup(clear_http)

    def respond(self, request):
        self.sent.append(request)
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def test_flush_posts_the_buffered_records_as_one_array(self):
        sink = create_sink(Webhook, {"url": URL})
        self.assertEqual(write(sink, [Record("v0", key="k0"), Record(None)]), [])
        self.assertEqual(self.sent, [], "write only buffers")
        flush(sink)
        [request] = self.sent
        self.assertEqual((request.method, request.url, request.header("content-type")), ("POST", URL, "application/json"))
        self.assertEqual(json.loads(request.body), [
            {"topic": "test", "partition": 0, "offset": 0, "key": "k0", "value": "v0"},
            {"topic": "test", "partition": 0, "offset": 1, "key": None, "value": None},
        ])
        flush(sink)
        self.assertEqual(len(self.sent), 1, "nothing left to send")

    def test_a_webhook_that_is_down_is_retried_with_the_records_kept(self):
        sink = create_sink(Webhook, {"url": URL})
        write(sink, [Record("a")])
        for answer in (Response(503), HttpError("ErrorCode::ConnectionRefused")):
            self.answer = answer
            with self.assertRaises(RecordError) as e:
                flush(sink)
            self.assertEqual(e.exception.kind, "retriable")
        self.answer = Response(200)
        flush(sink)
        self.assertEqual([json.loads(r.body)[0]["value"] for r in self.sent], ["a", "a", "a"])

    def test_a_refused_request_is_fatal(self):
        sink = create_sink(Webhook, {"url": URL})
        write(sink, [Record("a")])
        clear_http()  # no responder: refused, as on a connector without an http.allow grant
        with self.assertRaises(RecordError) as e:
            flush(sink)
        self.assertEqual(e.exception.kind, "fatal")

    def test_the_url_is_checked_in_create(self):
        for config in ({}, {"url": "ftp://x/"}, {"url": "https://"}):
            with self.subTest(config=config), self.assertRaises(ConfigError) as e:
                create_sink(Webhook, config)
            self.assertEqual(e.exception.key, "url")


if __name__ == "__main__":
    unittest.main()
