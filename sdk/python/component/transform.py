"""The exported ``transformer`` resource (componentize-py looks it up in a module named after
the exported interface): the author's Transform, batch by batch."""

import turnpike_glue as glue
from turnpike._plugin import TRANSFORM
from wit_world.exports import transform as wit

PLUGIN = glue.plugin_class(TRANSFORM)


class Transformer(wit.Transformer):
    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def create(cls, config):
        return cls(glue.create(PLUGIN, TRANSFORM, config))

    def transform(self, batch):
        outputs, _ = glue.transform_batch(self.inner, batch, forwarding=False)
        return outputs
