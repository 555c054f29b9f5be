"""The exported ``forwarding-transform`` resource (contract 0.1.4; componentize-py looks it up
in a module named after the exported interface): the author's Transform, batch by batch, with
the parts an output takes unchanged from its input named instead of copied. Hosts since 0.1.4
call this one; older hosts call ``transform.py``."""

import turnpike_glue as glue
from turnpike._plugin import TRANSFORM
from wit_world.exports import forwarding_transform as wit

PLUGIN = glue.plugin_class(TRANSFORM)


class Transformer(wit.Transformer):
    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def create(cls, config):
        return cls(glue.create(PLUGIN, TRANSFORM, config))

    def transform(self, batch):
        return wit.ForwardingBatch(*glue.transform_batch(self.inner, batch, forwarding=True))
