"""The per-batch path of a transform, independent of WebAssembly: the component and
``turnpike.testing`` both run it, so a native test sees what the host would."""

from ._errors import ConfigError, RecordError
from ._layout import FORWARD_HEADERS, FORWARD_KEY, FORWARD_VALUE, OutputWriter
from ._record import Record


def fatal_from(e):
    """A ConfigError escaping a per-batch method: the configuration turned out unusable, so
    the plugin cannot go on (a fatal error, as in wit/types.wit)."""
    return RecordError.fatal(str(e))


def outputs_of(result):
    """What ``transform`` returned, as a list of records. Anything else is a bug in the plugin
    (a TypeError, so a fault), not a bad record."""
    if result is None:
        return []
    if isinstance(result, Record):
        return [result]
    if isinstance(result, (list, tuple)):
        for r in result:
            if not isinstance(r, Record):
                raise TypeError(f"transform returned a list holding {type(r).__name__}, not Record")
        return list(result)
    raise TypeError(f"transform returned {type(result).__name__}; return None, a Record or a list of Records")


def run_batch(plugin, records, forwarding=False):
    """Runs ``transform`` over ``records``. Returns ``(writer, errors)``: the outputs laid out
    in an ``OutputWriter``, the failed inputs as ``(index, RecordError)``.

    With ``forwarding`` (the ``forwarding-transform`` export, contract 0.1.4), an output's
    key, value or headers that are still its input's own objects are named in
    ``writer.forwarded`` instead of copied: ``bytes`` cannot change in place, so the same
    object is the same bytes. Without it every byte is copied (the plain export, the tests).

    A RecordError fails its record only. A ConfigError fails the batch (raised as a fatal
    RecordError). Any other exception propagates: it is a fault, and the component traps.
    """
    writer = OutputWriter()
    errors = []
    for i, record in enumerate(records):
        # Taken before the plugin runs: it may reassign the record's attributes.
        own = (record.key, record.value, list(record.headers)) if forwarding else None
        try:
            produced = outputs_of(plugin.transform(record))
        except RecordError as e:
            errors.append((i, e))
            continue
        except ConfigError as e:
            raise fatal_from(e) from e
        for out in produced:
            parts = _forwarded_parts(out, *own) if forwarding else 0
            writer.push(i, out, forwarded=out.topic is not None and out.topic == out._read_from, parts=parts)
    return writer, errors


def _forwarded_parts(out, key, value, headers):
    """The ``FORWARD_*`` flags of the parts of ``out`` that are its input's own objects."""
    parts = 0
    if out.key is key:
        parts |= FORWARD_KEY
    if out.value is value:
        parts |= FORWARD_VALUE
    mine = out.headers
    if len(mine) == len(headers) and all(a[0] is b[0] and a[1] is b[1] for a, b in zip(mine, headers)):
        parts |= FORWARD_HEADERS
    return parts
