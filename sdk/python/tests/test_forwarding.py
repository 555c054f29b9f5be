"""Forwarding (contract 0.1.4): the ``forwarding-transform`` export names the parts of an
output that are its input's own instead of copying them, and what the host rebuilds from
those names must be exactly what the plain export copies."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from turnpike import Record, RecordError, Transform  # noqa: E402
from turnpike._layout import ABSENT, FORWARD_HEADERS, FORWARD_KEY, FORWARD_VALUE, HEADER_STRIDE, OUTPUT_STRIDE, InputWriter, decode, decode_output  # noqa: E402
from turnpike._transform import run_batch  # noqa: E402

ALL = FORWARD_KEY | FORWARD_VALUE | FORWARD_HEADERS


class Scripted(Transform):
    """Per record, by value: forwards it, replaces its value, makes a new record, changes a
    header in place, or forwards and then fails."""

    def transform(self, record):
        v = record.value
        if v == b"fwd":
            return record
        if v == b"new":
            return record.with_value(b"replaced")
        if v == b"emit":
            return Record(b"made")
        if v == b"retag":
            record.headers.append(("extra", b"1"))
            return record
        if v == b"fail":
            raise RecordError.invalid("no")
        return None


def inputs():
    w = InputWriter()
    for i, v in enumerate([b"fwd", b"fail", b"new", b"emit", b"retag"]):
        w.push(Record(v, key=b"k-" + v, headers=[("h", v)]), "in", 0, i)
    return w.columns()


def resolve(columns, forwarded, batch):
    """What the host does with the forwarded parts (sdk/batch-layout/src/forward.rs), for the test."""
    data, topics, records, timestamps, headers = columns
    data, records, headers = bytearray(data), list(records), list(headers)
    _, _, inputs, _, in_headers = batch
    in_data = batch[0]

    def copy(o, n):
        if n == ABSENT:
            return 0, ABSENT
        start = len(data)
        data.extend(in_data[o:o + n])
        return start, n

    for row, flags in enumerate(forwarded):
        r = records[row * OUTPUT_STRIDE:(row + 1) * OUTPUT_STRIDE]
        src = inputs[r[0] * 8:(r[0] + 1) * 8]
        if flags & FORWARD_KEY:
            r[1], r[2] = copy(src[0], src[1])
        if flags & FORWARD_VALUE:
            r[3], r[4] = copy(src[2], src[3])
        if flags & FORWARD_HEADERS:
            r[5], r[6] = len(headers) // HEADER_STRIDE, src[5]
            for j in range(src[4], src[4] + src[5]):
                ko, kl, vo, vl = in_headers[j * HEADER_STRIDE:(j + 1) * HEADER_STRIDE]
                headers.extend(copy(ko, kl) + copy(vo, vl))
        records[row * OUTPUT_STRIDE:(row + 1) * OUTPUT_STRIDE] = r
    return bytes(data), topics, records, timestamps, headers


class ForwardingTest(unittest.TestCase):
    def test_outputs_name_the_parts_they_forward_and_carry_only_their_own_bytes(self):
        batch = inputs()
        writer, errors = run_batch(Scripted(), decode(*batch), forwarding=True)
        self.assertEqual(writer.forwarded, [ALL, FORWARD_KEY | FORWARD_HEADERS, 0, FORWARD_KEY | FORWARD_VALUE])
        self.assertEqual(bytes(writer.data), b"replacedmadehretagextra1")
        self.assertEqual([i for i, _ in errors], [1])

    def test_resolved_outputs_are_what_the_plain_export_copies(self):
        batch = inputs()
        forwarding, _ = run_batch(Scripted(), decode(*batch), forwarding=True)
        plain, _ = run_batch(Scripted(), decode(*batch))
        self.assertEqual(plain.forwarded, [0, 0, 0, 0])
        resolved = decode_output(*resolve(forwarding.columns(), forwarding.forwarded, batch))
        self.assertEqual(resolved, decode_output(*plain.columns()))


if __name__ == "__main__":
    unittest.main()
