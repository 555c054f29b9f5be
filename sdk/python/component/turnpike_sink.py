"""The component's app module for a sink plugin (given to `componentize-py componentize`;
build glue, not for plugin authors). The exported resource lives in `sink.py`."""

from wit_world import exports


class Sink(exports.Sink):
    pass
