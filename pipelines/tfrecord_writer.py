"""A TFRecord file writer without TensorFlow (same bytes as `tf.io.TFRecordWriter`, tested).

Record framing: uint64 length, masked CRC32C of the length, data, masked CRC32C
of the data (little-endian). CRC32C comes from google-crc32c (C implementation).
"""

import struct

import google_crc32c

from albert_act.base import text_files


def masked_crc(data):
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


class TFRecordWriter:
    """`with TFRecordWriter(path) as w: w.write(serialized)`; local or gs:// paths."""

    def __init__(self, path):
        self.file = text_files.open_binary(path, "wb")

    def write(self, record):
        header = struct.pack("<Q", len(record))
        self.file.write(header + struct.pack("<I", masked_crc(header)) + record + struct.pack("<I", masked_crc(record)))

    def close(self):
        self.file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
