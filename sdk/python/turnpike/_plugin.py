"""The three plugin base classes and ``export``, which names the plugin class.

The class is named explicitly (``export(MyPlugin)`` at the end of ``plugin.py``) rather than
found by scanning for subclasses: a helper base class or an imported plugin can then never
be picked by mistake, and the build can ask which kind the plugin is before compiling it.
"""

import json

from ._errors import ConfigError

TRANSFORM = "transform"
SOURCE = "source"
SINK = "sink"


class Transform:
    """A single-message transform: implement ``transform(record)`` (and ``create`` if the
    plugin has settings).

    ``transform`` returns None (drop the record), a ``Record`` or a list of them. Raise
    ``RecordError`` to fail this record only; any other exception is a plugin fault.
    """

    def create(self, config):
        """Called once per instance with the plugin configuration (a dict). Raise
        ConfigError to refuse it."""

    def transform(self, record):
        """Return None (drop), a Record, or a list of Records; raise RecordError to fail it."""
        raise NotImplementedError("implement transform(self, record)")


class Source:
    """Reads from the outside world; the host produces what ``poll`` returns into Kafka.

    Every record carries the source's position after it (bytes or text you define: a cursor,
    a line number, an ETag). The host stores a position only once the record and every
    record before it are in Kafka, and hands the last stored one to ``create`` after a
    restart: resume right after it.
    """

    def create(self, config, position):
        """Called once per instance with the configuration (a dict) and the last stored
        position (bytes, or None on a first run). Do not touch the outside world here: the
        host may create a source only to check its configuration."""

    def poll(self, max_records):
        """Return at most ``max_records`` items made with ``emit``, ``emit_unpositioned`` and
        ``fail`` (an empty list or None: nothing new yet). Raise RecordError to fail the whole
        poll (``RecordError.retriable``: the host polls again after a backoff)."""
        raise NotImplementedError("implement poll(self, max_records)")


class Sink:
    """Writes records consumed from Kafka to the outside world.

    The host commits consumer offsets only after ``flush`` succeeds, so a sink that buffers
    in ``write`` makes everything durable in ``flush``. Delivery is at least once: after a
    crash, records written since the last successful flush are written again.
    """

    def create(self, config):
        """Called once per instance with the configuration (a dict). Do not write to the
        outside world here: the host may create a sink only to check its configuration."""

    def write(self, records):
        """Write (or buffer) a batch (a list of Record). Return None, or the records rejected
        for good as ``(index, RecordError)`` pairs (index into ``records``): the host
        dead-letters them or stops, per its error policy. Raise RecordError to fail the whole
        batch (``retriable``: the host retries the same batch, so keep none of it)."""
        raise NotImplementedError("implement write(self, records)")

    def flush(self):
        """Make everything written so far durable. Raise ``RecordError.retriable`` when the
        destination is unavailable: the host retries and commits nothing meanwhile."""

    def assigned(self, partitions):
        """Partitions newly assigned to this task, as ``(topic, partition)`` tuples."""

    def revoked(self, partitions):
        """Partitions about to be taken away (after a final flush), as ``(topic, partition)``."""


_BASES = ((Transform, TRANSFORM), (Source, SOURCE), (Sink, SINK))
_exported = []


def kind_of(cls):
    """``"transform"``, ``"source"`` or ``"sink"``: which base class ``cls`` derives from."""
    kinds = [kind for base, kind in _BASES if isinstance(cls, type) and issubclass(cls, base)]
    if len(kinds) != 1:
        what = cls.__name__ if isinstance(cls, type) else repr(cls)
        if kinds:
            raise TypeError(f"{what} derives from more than one of turnpike.Transform, Source and Sink; a plugin is one kind")
        raise TypeError(f"export({what}): pass a class deriving from turnpike.Transform, turnpike.Source or turnpike.Sink")
    return kinds[0]


def export(cls):
    """Names ``cls`` as the plugin. Call it once, at the end of ``plugin.py``. Returns ``cls``,
    so it also works as a class decorator."""
    kind_of(cls)
    if _exported:
        raise RuntimeError(f"turnpike.export was already called (with {_exported[0].__name__}); a plugin exports exactly one class")
    _exported.append(cls)
    return cls


def exported():
    """The class passed to ``export``."""
    if not _exported:
        raise LookupError("plugin.py does not call turnpike.export(YourClass)")
    return _exported[0]


def _forget_export():
    """Forgets the exported class (for the SDK's own tests)."""
    _exported.clear()


def instantiate(cls, kind, config_text, *args):
    """A plugin instance made as the host makes one: ``cls()`` then ``create`` with the
    configuration parsed from JSON text (empty text is ``{}``) and ``args`` (a source's
    position). A ConfigError passes through; any other exception in ``create`` becomes a
    ConfigError too (the connector does not start, and the user sees why)."""
    if kind_of(cls) != kind:
        raise TypeError(f"{cls.__name__} is a {kind_of(cls)}, not a {kind}")
    try:
        config = json.loads(config_text) if config_text.strip() else {}
    except ValueError as e:
        raise ConfigError(f"the configuration is not JSON: {e}") from e
    if not isinstance(config, dict):
        raise ConfigError("the configuration must be a mapping of keys to values")
    plugin = cls()
    try:
        plugin.create(config, *args)
    except ConfigError:
        raise
    except Exception as e:
        raise ConfigError(f"{type(e).__name__}: {e}") from e
    return plugin
