"""Run a plugin class natively, in ``python3 -m unittest``, through the same per-call code
the component runs (everything except the WebAssembly boundary), as the Rust SDK's
``testing`` module::

    from turnpike import Record
    from turnpike.testing import create, run

    outputs, errors = run(create(Upper, {"field": "name"}), [Record('{"name": "ada"}')])

Records go through the batch layout both ways, so what a test sees is what the host would
get, and ``turnpike.log`` lines are kept for ``logged()``. A RecordError that fails a whole
batch, poll, write or flush is raised; any other exception propagates unchanged (in the
component it is a fault: the instance traps).
"""

import json

from . import http as _http
from . import log as _log
from ._layout import InputWriter, decode, decode_output, decode_source
from ._plugin import SINK, SOURCE, TRANSFORM, instantiate
from ._sink import run_flush, run_write
from ._source import Polled, run_poll
from ._transform import run_batch


def _config_text(config):
    """The configuration as the host passes it: JSON text (a dict is encoded first)."""
    if config is None:
        return "{}"
    return config if isinstance(config, str) else json.dumps(config)


def create(cls, config=None):
    """A transform made from ``config`` (a dict or JSON text) as the host makes it. Raises
    ConfigError if ``create`` refuses it (or fails in any other way)."""
    return instantiate(cls, TRANSFORM, _config_text(config))


def create_source(cls, config=None, position=None):
    """A source made from ``config`` and the last stored ``position`` (bytes, text or None)."""
    if isinstance(position, str):
        position = position.encode("utf-8")
    return instantiate(cls, SOURCE, _config_text(config), None if position is None else bytes(position))


def create_sink(cls, config=None):
    """A sink made from ``config``."""
    return instantiate(cls, SINK, _config_text(config))


def _input_batch(records):
    """Records as the host would send them. Where a record does not say, its topic is
    ``test``, its partition 0 and its offset its index in the batch."""
    writer = InputWriter()
    for i, r in enumerate(records):
        writer.push(r, r.topic or "test", 0 if r.partition == -1 else r.partition, i if r.offset == -1 else r.offset)
    return decode(*writer.columns())


def run(transform, records):
    """Runs ``records`` through ``transform`` as one batch. Returns ``(outputs, errors)``:
    outputs as ``(input_index, Record)``, failed inputs as ``(input_index, RecordError)``."""
    writer, errors = run_batch(transform, _input_batch(records))
    return decode_output(*writer.columns()), errors


def poll(source, max_records=100):
    """Polls ``source`` once, as the host does. Returns a list of ``Polled``: ``.record``,
    ``.position`` (bytes or None) and ``.error`` (a RecordError for a record reported with
    ``fail``, else None)."""
    writer, errors = run_poll(source, max_records)
    failed = dict(errors)
    return [Polled(r, p, failed.get(i)) for i, (r, p) in enumerate(decode_source(*writer.columns()))]


def write(sink, records):
    """Writes ``records`` to ``sink`` as one batch (topic ``test``, partition 0, offsets from
    0 unless the records say). Returns the rejected records as ``(index, RecordError)``."""
    return run_write(sink, _input_batch(records))


def flush(sink):
    """Flushes ``sink`` as the host does before it commits."""
    run_flush(sink)


def assign(sink, partitions):
    """Tells ``sink`` that ``partitions`` (``(topic, partition)`` tuples) are assigned."""
    sink.assigned([(t, p) for t, p in partitions])


def revoke(sink, partitions):
    """Tells ``sink`` that ``partitions`` are taken away, as the host does after a final flush."""
    sink.revoked([(t, p) for t, p in partitions])


def respond_http(responder):
    """Makes ``responder(request) -> Response`` answer every ``turnpike.http`` request (it may
    raise ``HttpError``; ``refused=True`` is what the host does for a host not granted)."""
    _http._transport = responder


def clear_http():
    """Removes the responder: requests fail as refused again, as on a connector without an
    HTTP grant."""
    _http._transport = _http._unanswered


def logged():
    """The lines logged with ``turnpike.log`` since the last ``clear_log`` (natively they go
    nowhere else; the last 10,000 are kept), oldest first: ``(level, message, fields)``, fields
    as ``(key, text)`` pairs."""
    return list(_log._lines)


def clear_log():
    """Forgets the lines logged so far (call it in ``setUp``: they are kept across tests)."""
    _log._lines.clear()
