"""The component's world module for componentize-py (generated glue; not for plugin authors)."""

from wit_world import exports


class Transform(exports.Transform):
    pass
