"""The per-batch path of a transform, independent of WebAssembly: the component and
``turnpike.testing`` both run it, so a native test sees what the host would."""

from ._errors import ConfigError, RecordError
from ._layout import OutputWriter
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


def run_batch(plugin, records):
    """Runs ``transform`` over ``records``. Returns ``(writer, errors)``: the outputs laid out
    in an ``OutputWriter``, the failed inputs as ``(index, RecordError)``.

    A RecordError fails its record only. A ConfigError fails the batch (raised as a fatal
    RecordError). Any other exception propagates: it is a fault, and the component traps.
    """
    writer = OutputWriter()
    errors = []
    for i, record in enumerate(records):
        try:
            produced = outputs_of(plugin.transform(record))
        except RecordError as e:
            errors.append((i, e))
            continue
        except ConfigError as e:
            raise fatal_from(e) from e
        for out in produced:
            writer.push(i, out, forwarded=out.topic is not None and out.topic == out._read_from)
    return writer, errors
