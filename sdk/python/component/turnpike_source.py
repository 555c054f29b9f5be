"""The component's app module for a source plugin (given to `componentize-py componentize`;
build glue, not for plugin authors). The exported resource lives in `source.py`."""

from wit_world import exports


class Source(exports.Source):
    pass
