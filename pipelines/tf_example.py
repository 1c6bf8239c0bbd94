"""`tf.train.Example` serialization without importing TensorFlow, byte-deterministic.

Pre-training workers build millions of Examples; importing TensorFlow in every
worker costs seconds and hundreds of MB, and protobuf map order is not guaranteed
stable. The Example wire format is small, so it is written here directly, with
features in sorted key order. `tf.io.parse_single_example` reads it
(tests/test_pretraining_data.py checks it against `tf.train.Example`).

Wire format: Example{1: Features{1: map<string, Feature>}};
Feature{2: FloatList{1: packed float}, 3: Int64List{1: packed varint}}.
"""

import struct


def _varint(value):
    out = bytearray()
    value &= (1 << 64) - 1  # negative int64: two's complement, 10 bytes
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


_SMALL_VARINTS = [_varint(i) for i in range(1 << 16)]


def _packed_varints(values):
    if not values or (min(values) >= 0 and max(values) < 128):
        return bytes(values)  # one byte each: masks, segment ids, boundaries, labels
    table = _SMALL_VARINTS
    return b"".join(table[v] if 0 <= v < 65536 else _varint(v) for v in values)


def _length_delimited(field_tag, payload):
    return field_tag + _varint(len(payload)) + payload


def int64_feature(values):
    """Serialized `Feature` holding an Int64List of Python ints."""
    int64_list = _length_delimited(b"\x0a", _packed_varints(values))
    return _length_delimited(b"\x1a", int64_list)


def float_feature(values):
    """Serialized `Feature` holding a FloatList (float32)."""
    float_list = _length_delimited(b"\x0a", struct.pack(f"<{len(values)}f", *values))
    return _length_delimited(b"\x12", float_list)


def serialize_example(features):
    """{name: serialized Feature} -> serialized `tf.train.Example` (keys in sorted order)."""
    entries = b"".join(
        _length_delimited(b"\x0a", _length_delimited(b"\x0a", key.encode()) + _length_delimited(b"\x12", feature))
        for key, feature in sorted(features.items())
    )
    return _length_delimited(b"\x0a", entries)
