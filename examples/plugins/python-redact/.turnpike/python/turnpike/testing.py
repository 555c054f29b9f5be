"""Run a plugin class natively, without building a component::

    from turnpike.testing import create, run
    from turnpike import Record

    plugin = create(Upper, {"field": "name"})
    outputs, errors = run(plugin, [Record('{"name": "ada"}')])
"""

from ._transform import run as _run


def create(cls, config=None):
    """An instance of ``cls`` created with ``config`` (a dict), as the host would."""
    plugin = cls()
    plugin.create(dict(config or {}))
    return plugin


def run(plugin, records):
    """``(outputs, errors)`` for ``records``: outputs as ``(input_index, Record)``, errors as
    ``(input_index, kind, message)``."""
    return _run(plugin, list(records))
