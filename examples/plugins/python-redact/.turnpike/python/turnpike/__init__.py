"""Write Turnpike transforms in Python.

A plugin is a class with ``create(config)``, called once with the connector's plugin
configuration (a dict), and ``process(record)``, called for each record::

    from turnpike import Transform

    class Upper(Transform):
        def create(self, config):
            self.field = config.get("field", "name")

        def process(self, record):
            data = record.json()
            data[self.field] = str(data.get(self.field, "")).upper()
            return record.with_value(data)

``process`` returns ``None`` to drop the record, one record, or a list of records. Raise
``RecordError`` to fail one record (the connector's error policy decides what happens to it:
dead-letter, skip or stop); any other exception does the same with its text as the message.
Raise ``ConfigError`` from ``create`` to refuse a configuration, naming the key.

``turnpike plugin build`` turns the module into a WebAssembly component with componentize-py;
``turnpike.testing`` runs the same class natively, and ``turnpike plugin test`` runs the built
component through the real host runtime.
"""

from ._errors import ConfigError, RecordError
from ._record import Record
from ._transform import Transform, registered

__all__ = ["ConfigError", "Record", "RecordError", "Transform", "registered"]
