"""What the three exported resources share: finding the plugin class, plugging
``turnpike.http`` into wasi:http and ``turnpike.log`` into the host's log, and turning the
SDK's errors into the contract's.

It runs when componentize-py pre-initializes the component (at build time), so a plugin that
exports no class, or a class of another kind than the world being built, fails the build.

Only RecordError and ConfigError are turned into ``Err`` results. Any other exception is left
to escape the export: componentize-py then traps, and the host treats it as a plugin fault
(discards the instance), as it does a Rust panic.
"""

import turnpike.http
import turnpike.log
import turnpike_host_log
import turnpike_wasi_http
from componentize_py_types import Err
from turnpike import ConfigError, RecordError, exported
from turnpike._errors import FATAL, INVALID_RECORD, RETRIABLE
from turnpike._layout import decode
from turnpike._plugin import instantiate, kind_of
from turnpike._transform import run_batch
from wit_world.imports import turnpike_plugin_types as types

_KINDS = {INVALID_RECORD: types.ErrorKind.INVALID_RECORD, RETRIABLE: types.ErrorKind.RETRIABLE, FATAL: types.ErrorKind.FATAL}

turnpike.http._transport = turnpike_wasi_http.send


def plugin_class(kind):
    """The class ``plugin.py`` exported, which must be a ``kind``."""
    import plugin  # noqa: F401  (the author's module; it calls turnpike.export)

    # Only now: plugin.py is imported at build time (componentize-py pre-initializes the
    # component), where no host takes a line (the contract takes them from `create` on), so
    # one logged while it loads is dropped.
    turnpike.log._lines.clear()
    turnpike.log._sink = turnpike_host_log.write

    cls = exported()
    if kind_of(cls) != kind:
        raise TypeError(f"plugin.py exports {cls.__name__}, a {kind_of(cls)}, but the component is being built as a {kind}")
    return cls


def plugin_error(e):
    return types.PluginError(_KINDS[e.kind], e.message)


def record_errors(errors):
    """``(index, RecordError)`` pairs as the contract's ``record-error`` list."""
    return [types.RecordError(i, plugin_error(e)) for i, e in errors]


def create(cls, kind, config, *args):
    """An instance of the plugin; a refused configuration is the ``Err`` of ``create``."""
    try:
        return instantiate(cls, kind, config, *args)
    except ConfigError as e:
        raise Err(types.ConfigError(e.key, e.message)) from None


def call(fn, *args):
    """``fn(*args)``; a RecordError becomes the ``Err(plugin-error)`` of the export."""
    try:
        return fn(*args)
    except RecordError as e:
        raise Err(plugin_error(e)) from None


def transform_batch(inner, batch, forwarding):
    """One input batch through the author's transform, for either transform export: the
    contract's ``output-batch`` and the flags of the parts each output forwards (all ``0``
    unless ``forwarding``, when they are named instead of copied)."""
    records = decode(batch.data, batch.topics, batch.records, batch.positions, batch.headers)
    writer, errors = call(run_batch, inner, records, forwarding)
    return types.OutputBatch(*writer.columns(), record_errors(errors)), writer.forwarded
