"""turnpike.http natively: requests answered by a test responder, or refused without one."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from turnpike import http  # noqa: E402
from turnpike.http import HttpError, Request, Response  # noqa: E402
from turnpike.testing import clear_http, respond_http  # noqa: E402


class HttpTest(unittest.TestCase):
    def setUp(self):
        self.addCleanup(clear_http)

    def test_without_a_responder_every_request_is_refused(self):
        with self.assertRaises(HttpError) as e:
            http.get("https://api.example.com/x")
        self.assertTrue(e.exception.refused)
        self.assertEqual(e.exception.message, "no HTTP responder installed (turnpike.testing.respond_http)")

    def test_the_responder_sees_the_request_and_its_answer_comes_back(self):
        seen = []

        def respond(request):
            seen.append(request)
            return Response(201, {"Content-Type": "application/json"}, {"ok": True})

        respond_http(respond)
        answer = http.post("http://127.0.0.1:8080/in?x=1", {"a": "é"}, headers={"x-id": "7"}, timeout=2.5)
        self.assertEqual((answer.status, answer.ok, answer.json(), answer.text()), (201, True, {"ok": True}, '{"ok":true}'))
        self.assertEqual((answer.header("content-type"), answer.header("CONTENT-TYPE"), answer.header("nope")), ("application/json", "application/json", None))
        [request] = seen
        self.assertEqual((request.method, request.url, request.timeout), ("POST", "http://127.0.0.1:8080/in?x=1", 2.5))
        self.assertEqual(request.headers, [("x-id", "7"), ("content-type", "application/json")])
        self.assertEqual(request.body, '{"a":"é"}'.encode())
        http.get("https://api.example.com")
        self.assertEqual((seen[1].method, seen[1].body, seen[1].headers), ("GET", b"", []))

    def test_bodies_keep_their_content_type(self):
        request = Request("post", "http://h/", [("Content-Type", "text/csv")], [1, 2])
        self.assertEqual((request.method, request.header("content-type"), request.body), ("POST", "text/csv", b"[1,2]"))
        self.assertEqual(Request("PUT", "http://h/", body="text").body, b"text")
        self.assertIsNone(Request("PUT", "http://h/", body=b"raw").header("content-type"))

    def test_a_responder_may_refuse_or_fail(self):
        def respond(request):
            raise HttpError("ErrorCode::ConnectionTimeout")

        respond_http(respond)
        with self.assertRaises(HttpError) as e:
            http.get("http://slow.example.com/")
        self.assertEqual((e.exception.message, e.exception.refused), ("ErrorCode::ConnectionTimeout", False))

    def test_a_status_is_an_answer_not_an_error(self):
        respond_http(lambda request: Response(404))
        answer = http.get("http://h/missing")
        self.assertEqual((answer.status, answer.ok, answer.body), (404, False, b""))

    def test_a_responder_must_answer_with_a_response(self):
        respond_http(lambda request: "OK")
        with self.assertRaises(TypeError):
            http.get("http://h/")

    def test_urls_split_into_their_parts_as_in_the_rust_sdk(self):
        self.assertEqual(http.split_url("http://127.0.0.1:8080/a/b?c=d"), ("http", "127.0.0.1:8080", "/a/b?c=d"))
        self.assertEqual(http.split_url("https://api.example.com"), ("https", "api.example.com", "/"))
        self.assertEqual(http.split_url("https://api.example.com?x=1"), ("https", "api.example.com", "?x=1"))
        for bad in ("ftp://x/", "http:///x", "api.example.com", None):
            with self.subTest(url=bad), self.assertRaises(HttpError) as e:
                http.check_url(bad)
            self.assertFalse(e.exception.refused)

    def test_a_bad_url_fails_before_the_responder(self):
        respond_http(lambda request: self.fail("the responder was called"))
        with self.assertRaises(HttpError):
            http.get("nope")


if __name__ == "__main__":
    unittest.main()
