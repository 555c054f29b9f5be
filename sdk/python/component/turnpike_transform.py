"""The component's app module for a transform plugin (given to `componentize-py componentize`;
build glue, not for plugin authors). The exported resource lives in `transform.py`."""

from wit_world import exports


class Transform(exports.Transform):
    pass


class ForwardingTransform(exports.ForwardingTransform):
    pass
