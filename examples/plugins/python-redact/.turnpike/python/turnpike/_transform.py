"""The Transform base class and the per-batch loop, independent of WebAssembly."""

from ._errors import INVALID, ConfigError, RecordError
from ._record import Record

_registered = []


class Transform:
    """Subclass it, and implement ``process`` (and ``create`` if the plugin has settings)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _registered.append(cls)

    def create(self, config):
        """Called once with the plugin configuration (a dict). Raise ConfigError to refuse it."""

    def process(self, record):
        """Return None (drop), a Record, or a list of Records; raise RecordError to fail it."""
        raise NotImplementedError("implement process(record)")


def registered():
    """The plugin class: the last Transform subclass defined."""
    if not _registered:
        raise ConfigError("the plugin module defines no subclass of turnpike.Transform")
    return _registered[-1]


def outputs_of(result):
    """What ``process`` returned, as a list of records."""
    if result is None:
        return []
    if isinstance(result, Record):
        return [result]
    if isinstance(result, (list, tuple)):
        for r in result:
            if not isinstance(r, Record):
                raise RecordError(f"process returned a list holding {type(r).__name__}, not Record")
        return list(result)
    raise RecordError(f"process returned {type(result).__name__}; return None, a Record or a list of Records")


def run(plugin, records):
    """Runs ``process`` over records. Returns ``(outputs, errors)``: outputs as
    ``(input_index, Record)`` pairs, errors as ``(input_index, kind, message)``."""
    outputs, errors = [], []
    for i, record in enumerate(records):
        try:
            produced = outputs_of(plugin.process(record))
        except RecordError as e:
            errors.append((i, e.kind, e.message))
            continue
        except Exception as e:  # a bug in one record's handling fails that record, not the batch
            errors.append((i, INVALID, f"{type(e).__name__}: {e}"))
            continue
        outputs.extend((i, out) for out in produced)
    return outputs, errors
