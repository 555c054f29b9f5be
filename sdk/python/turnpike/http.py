"""Outgoing HTTP from a plugin, blocking and small, as the Rust SDK's ``turnpike_sdk::http``.

The host refuses every request unless the connector lists the host in its ``http.allow``
grant (and refuses private, loopback and link-local addresses unless the grant names the
address itself); a refusal raises ``HttpError`` with ``refused=True``, never a trap. Inside
the component, requests go out through ``wasi:http`` (the component glue plugs that
transport in, so this module imports nothing from the generated bindings and works natively);
in native tests they go to the responder set with ``turnpike.testing.respond_http``.
"""

import json as _json

__all__ = ["HttpError", "Request", "Response", "check_url", "get", "post", "send"]


class HttpError(Exception):
    """A request that got no response. ``refused`` is True when the host refused it (not in
    the connector's ``http.allow``, or an internal address): retrying will not help until the
    grant changes. Any status code, 404 or 500 included, is a ``Response``, not an HttpError."""

    def __init__(self, message, refused=False):
        super().__init__(message)
        self.message = str(message)
        self.refused = bool(refused)

    def __repr__(self):
        return f"HttpError({self.message!r}, refused={self.refused})"


def _bytes(body):
    """Body bytes from None, bytes, text or a JSON-able value (sent as compact JSON)."""
    if body is None:
        return b""
    if isinstance(body, (bytes, bytearray, memoryview)):
        return bytes(body)
    if isinstance(body, str):
        return body.encode("utf-8")
    return _json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _is_json(body):
    return body is not None and not isinstance(body, (bytes, bytearray, memoryview, str))


def _header_list(headers):
    pairs = headers.items() if isinstance(headers, dict) else (headers or [])
    return [(str(k), str(v)) for k, v in pairs]


class Request:
    """An HTTP request: ``method`` (``GET``, ``POST``…), ``url`` (``http://host[:port]/path``
    or ``https://…``), ``headers`` (``(name, value)`` text pairs), ``body`` (bytes) and
    ``timeout`` (seconds to wait for the response, or None; the host clamps it). A body
    that is not bytes or text is sent as JSON, with ``content-type: application/json``
    unless the headers name one."""

    def __init__(self, method, url, headers=None, body=None, timeout=None):
        self.method = str(method).upper()
        self.url = url
        self.headers = _header_list(headers)
        if _is_json(body) and self.header("content-type") is None:
            self.headers.append(("content-type", "application/json"))
        self.body = _bytes(body)
        self.timeout = timeout

    def header(self, name):
        """The first value of header ``name`` (case-insensitive), or None."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def __repr__(self):
        return f"Request({self.method!r}, {self.url!r}, headers={self.headers!r}, body={self.body!r})"


class Response:
    """An HTTP response, body read in full: ``status``, ``headers`` (``(lower-case name,
    bytes)`` pairs) and ``body`` (bytes; a test may pass text or a JSON-able value)."""

    def __init__(self, status, headers=None, body=b""):
        self.status = int(status)
        pairs = headers.items() if isinstance(headers, dict) else (headers or [])
        self.headers = [(str(k).lower(), v.encode("utf-8") if isinstance(v, str) else bytes(v)) for k, v in pairs]
        self.body = _bytes(body)

    @property
    def ok(self):
        """Whether the status is 2xx."""
        return 200 <= self.status < 300

    def header(self, name):
        """The first value of header ``name`` (case-insensitive) as text, or None."""
        for k, v in self.headers:
            if k == name.lower():
                return v.decode("utf-8", "replace")
        return None

    def text(self):
        """The body as UTF-8 text (undecodable bytes replaced)."""
        return self.body.decode("utf-8", "replace")

    def json(self):
        """The body parsed as JSON (ValueError if it is not)."""
        return _json.loads(self.body)

    def __repr__(self):
        return f"Response({self.status}, body={self.body[:80]!r})"


def split_url(url):
    """``(scheme, authority, path_with_query)`` of an ``http://`` or ``https://`` URL, as
    the Rust SDK splits it; HttpError (not refused) for anything else."""
    bad = HttpError(f"{url!r} is not an http:// or https:// URL")
    if not isinstance(url, str) or "://" not in url:
        raise bad
    scheme, rest = url.split("://", 1)
    if scheme not in ("http", "https"):
        raise bad
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=-1)
    authority, path = (rest, "/") if cut < 0 else (rest[:cut], rest[cut:])
    if not authority:
        raise bad
    return scheme, authority, path


def check_url(url):
    """Raises HttpError unless ``send`` would accept ``url``, so a plugin can refuse a bad
    URL in ``create`` rather than at the first request."""
    split_url(url)


def _unanswered(request):
    raise HttpError("no HTTP responder installed (turnpike.testing.respond_http)", refused=True)


# What carries a request: wasi:http in the component (set by the glue), a test's responder
# natively (set by turnpike.testing), or nothing.
_transport = _unanswered


def send(request):
    """Sends ``request`` and reads the whole response. Raises HttpError when no response came
    (refused, unreachable, timed out)."""
    split_url(request.url)
    response = _transport(request)
    if not isinstance(response, Response):
        raise TypeError(f"the HTTP transport returned {type(response).__name__}, not turnpike.http.Response")
    return response


def get(url, headers=None, timeout=None):
    """``GET url``."""
    return send(Request("GET", url, headers, None, timeout))


def post(url, body, headers=None, timeout=None):
    """``POST body to url``: bytes, text, or a JSON-able value sent as JSON."""
    return send(Request("POST", url, headers, body, timeout))
