"""``turnpike.http`` over ``wasi:http/outgoing-handler``, inside the component only (the glue
installs ``send`` as the transport). It follows the Rust SDK's wasm transport step by step,
so both languages send the same requests and report the same errors: the request is handed
to the host before its body is written (so a body larger than the host's buffer cannot
deadlock), the response is awaited by blocking on its pollable, and the body is read to the
end. Resources are dropped child before parent, as wasi:http requires.

One step differs: when writing the body fails, the response future is still consulted, since
the host closes the body stream of a request it refuses and the future carries the refusal
(``HTTP-request-denied``), which is what the plugin must see (the Rust SDK reports the closed
stream there).
"""

from componentize_py_types import Err, Ok
from turnpike.http import HttpError, Response, split_url
from wit_world.imports import outgoing_handler
from wit_world.imports import streams
from wit_world.imports import wasi_http_types as t

# The codes by which the host refuses a request (not granted, or an internal address).
_REFUSED = (t.ErrorCode_HttpRequestDenied, t.ErrorCode_DestinationIpProhibited)
_METHODS = {"GET": t.Method_Get, "POST": t.Method_Post, "PUT": t.Method_Put, "DELETE": t.Method_Delete,
            "PATCH": t.Method_Patch, "HEAD": t.Method_Head}
_U64_MAX = 2**64 - 1


def _error(message):
    return HttpError(message, refused=False)


def _rust_debug(value):
    """A payload as Rust's ``{:?}`` prints it (``Some("…")``, ``None``, ``Payload { … }``), so
    messages match the Rust SDK's."""
    if value is None:
        return "None"
    if isinstance(value, str):
        return 'Some("' + value.replace("\\", "\\\\").replace('"', '\\"') + '")'
    if isinstance(value, int):
        return f"Some({value})"
    fields = ", ".join(f"{k.replace('_', '-')}: {_rust_debug(v)}" for k, v in vars(value).items())
    return f"{type(value).__name__} {{ {fields} }}"


def code_error(code):
    """An ``error-code`` as HttpError: ``ErrorCode::HttpRequestDenied`` and
    ``ErrorCode::DestinationIpProhibited`` are refusals, the rest (timeouts included) are not."""
    name = "ErrorCode::" + type(code).__name__.split("_", 1)[1]
    if hasattr(code, "value"):
        name += f"({_rust_debug(code.value)})"
    return HttpError(name, refused=isinstance(code, _REFUSED))


def _nanos(timeout):
    seconds = timeout.total_seconds() if hasattr(timeout, "total_seconds") else float(timeout)
    return max(0, min(_U64_MAX, int(seconds * 1_000_000_000)))


def _outgoing(request):
    """The ``outgoing-request`` for ``request``, and its body."""
    scheme, authority, path = split_url(request.url)
    entries = [(k, v.encode("utf-8")) for k, v in request.headers]
    # A known length rather than chunked encoding, which not every endpoint accepts.
    if request.body and request.header("content-length") is None:
        entries.append(("content-length", str(len(request.body)).encode()))
    try:
        headers = t.Fields.from_list(entries)
    except Err as e:
        raise _error(f"bad header: {e.value}") from None
    outgoing = t.OutgoingRequest(headers)
    method = _METHODS.get(request.method)
    try:
        outgoing.set_method(method() if method else t.Method_Other(request.method))
        outgoing.set_scheme(t.Scheme_Https() if scheme == "https" else t.Scheme_Http())
        outgoing.set_authority(authority)
        outgoing.set_path_with_query(path)
    except Err:
        raise _error(f"{request.url} is not a valid request") from None
    try:
        body = outgoing.body()
    except Err:
        raise _error("request body unavailable") from None
    return outgoing, body


def _options(request):
    options = t.RequestOptions()
    if request.timeout is not None:
        for setter in (options.set_first_byte_timeout, options.set_between_bytes_timeout):
            try:
                setter(_nanos(request.timeout))
            except Err:
                pass  # the host keeps its own timeout
    return options


def _stream_error(e):
    """A ``stream-error`` as Rust's ``{:?}`` prints it."""
    if isinstance(e, streams.StreamError_Closed):
        return "StreamError::Closed"
    return f"StreamError::LastOperationFailed({e.value.to_debug_string()})"


def _write_body(body, data):
    """Writes and finishes the request body; on failure the body is dropped unfinished,
    which tells the host the request is incomplete."""
    finished = False
    try:
        try:
            stream = body.write()
        except Err:
            raise _error("request body stream unavailable") from None
        with stream:
            for at in range(0, len(data), 4096):
                try:
                    stream.blocking_write_and_flush(data[at:at + 4096])
                except Err as e:
                    raise _error(f"writing the request body: {_stream_error(e.value)}") from None
        finished = True
        try:
            t.OutgoingBody.finish(body, None)
        except Err as e:
            raise code_error(e.value) from None
    finally:
        if not finished:
            body.__exit__(None, None, None)


def _read_body(response):
    try:
        incoming = response.consume()
    except Err:
        raise _error("response body unavailable") from None
    data = bytearray()
    try:
        stream = incoming.stream()
    except Err:
        raise _error("response body stream unavailable") from None
    with stream:
        while True:
            try:
                data += stream.blocking_read(64 * 1024)
            except Err as e:
                if isinstance(e.value, streams.StreamError_Closed):
                    break
                raise _error(f"reading the response: {e.value.value.to_debug_string()}") from None
    with t.IncomingBody.finish(incoming):
        pass
    return bytes(data)


def send(request):
    """Sends ``request`` through the host and reads the whole response."""
    outgoing, body = _outgoing(request)
    try:
        pending = outgoing_handler.handle(outgoing, _options(request))
    except Err as e:
        raise code_error(e.value) from None
    with pending:
        try:
            _write_body(body, request.body)
            write_failed = None
        except HttpError as e:
            # A refused request closes the body stream; the future then says why, and that
            # reason (a refusal) is the one to report, not the closed stream.
            write_failed = e
        with pending.subscribe() as ready:
            ready.block()
        answer = pending.get()
        if not isinstance(answer, Ok):
            raise _error("response already taken")
        if isinstance(answer.value, Err):
            raise code_error(answer.value.value)
        with answer.value.value as response:
            if write_failed is not None:
                raise write_failed
            with response.headers() as fields:
                headers = fields.entries()
            status = response.status()
            data = _read_body(response)
    return Response(status, headers, data)
