"""Write Turnpike plugins in Python: transforms, sources and sinks.

A plugin is a class deriving from ``Transform``, ``Source`` or ``Sink``, named with
``export`` at the end of ``plugin.py``::

    from turnpike import Transform, export

    class Upper(Transform):
        def create(self, config):
            self.field = config.get("field", "name")

        def transform(self, record):
            data = record.json()
            data[self.field] = str(data.get(self.field, "")).upper()
            return record.with_value(data)

    export(Upper)

Raise ``RecordError`` (``.invalid``, ``.retriable``, ``.fatal``) to report a failure on
purpose, ``ConfigError`` from ``create`` to refuse a configuration. Any other exception is a
plugin fault, like a Rust panic: the component traps and the host discards the instance.

``turnpike.http`` sends HTTP requests (granted per connector), ``turnpike.log`` writes to
the host's log, ``turnpike.testing`` runs the class natively, ``turnpike plugin build`` makes
a WebAssembly component of it with componentize-py, and ``turnpike plugin test`` runs that
through the real host runtime.
"""

from ._errors import FATAL, INVALID_RECORD, RETRIABLE, ConfigError, RecordError
from ._plugin import Sink, Source, Transform, export, exported
from ._record import Record
from ._source import Polled, emit, emit_unpositioned, fail

__version__ = "0.1.6"

__all__ = [
    "FATAL",
    "INVALID_RECORD",
    "RETRIABLE",
    "ConfigError",
    "Polled",
    "Record",
    "RecordError",
    "Sink",
    "Source",
    "Transform",
    "emit",
    "emit_unpositioned",
    "exported",
    "export",
    "fail",
]
