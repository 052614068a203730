"""TFRecord files (the container of TensorBoard event files), read without TensorFlow.

A TFRecord file is a sequence of records, each::

    uint64 length | uint32 masked CRC-32C of the length | data | uint32 masked CRC-32C of the data

all little-endian.  We check both CRCs of every record and stop with a
:class:`~graphviz_tb.errors.CorruptRecordError` naming the byte offset of the first bad one,
because a silently skipped record can be the very graph the user asked for.  Records are streamed
one at a time so a large event file (hours of scalars) is never held in memory at once.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from typing import BinaryIO

import google_crc32c

from ..errors import CorruptRecordError, InputError

__all__ = ["is_tfrecord_header", "iter_records", "masked_crc32c", "read_record_at"]

_HEADER = struct.Struct("<QI")  # length, masked CRC of the 8 length bytes
_FOOTER = struct.Struct("<I")  # masked CRC of the data
_MASK_DELTA = 0xA282EAD8


def masked_crc32c(data: bytes) -> int:
    """Return TFRecord's masked CRC-32C of ``data``.

    The mask (rotate right by 15, add a constant) keeps a CRC computed over data that itself
    holds CRCs from being trivially zero; TFRecord writers store this value, not the raw CRC.
    """
    crc = google_crc32c.value(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def is_tfrecord_header(head: bytes) -> bool:
    """Tell whether the first bytes of a file are a TFRecord record header with a valid CRC.

    Twelve bytes whose last four are the masked CRC of the first eight happen by chance about
    once in four billion files, so this recognises event files by content, whatever their name.
    """
    if len(head) < _HEADER.size:
        return False
    _, length_crc = _HEADER.unpack_from(head)
    return masked_crc32c(head[:8]) == length_crc


def _read_one(stream: BinaryIO, offset: int, size: int, name: str) -> bytes | None:
    """Read and check the record at ``offset``; None at a clean end of file."""
    header = stream.read(_HEADER.size)
    if not header:
        return None
    if len(header) < _HEADER.size:
        raise CorruptRecordError(
            f"{name}: record at byte {offset} is cut short at byte {offset + len(header)} "
            "(the file ends inside its header; was it still being written?)"
        )
    length, length_crc = _HEADER.unpack(header)
    if masked_crc32c(header[:8]) != length_crc:
        raise CorruptRecordError(
            f"{name}: record at byte {offset} is corrupt (length CRC mismatch)"
        )
    end = offset + _HEADER.size + length + _FOOTER.size
    if end > size:
        raise CorruptRecordError(
            f"{name}: record at byte {offset} is cut short at byte {size} "
            f"(it needs {end - size} more bytes; was the file still being written?)"
        )
    body = stream.read(length + _FOOTER.size)
    if len(body) < length + _FOOTER.size:
        raise CorruptRecordError(
            f"{name}: record at byte {offset} is cut short at byte "
            f"{offset + _HEADER.size + len(body)} (the file shrank while being read)"
        )
    data = body[:length]
    if masked_crc32c(data) != _FOOTER.unpack_from(body, length)[0]:
        raise CorruptRecordError(f"{name}: record at byte {offset} is corrupt (data CRC mismatch)")
    return data


def iter_records(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes]]:
    """Yield ``(byte offset, data)`` for every record of a TFRecord file, checking each CRC.

    Raises
    ------
    CorruptRecordError
        A record fails a CRC check or the file ends inside a record.
    InputError
        The file cannot be read.
    """
    name = os.fspath(path)
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            offset = 0
            while (data := _read_one(stream, offset, size, name)) is not None:
                yield offset, data
                offset += _HEADER.size + len(data) + _FOOTER.size
    except OSError as exc:
        raise InputError(f"{name}: cannot read the file ({exc.strerror or exc})") from None


def read_record_at(path: str | os.PathLike[str], offset: int) -> bytes:
    """Read the one record that starts at ``offset`` (as yielded by :func:`iter_records`).

    Loading a graph found during discovery re-reads just its record, so discovery need not keep
    every graph's bytes in memory.
    """
    name = os.fspath(path)
    try:
        with open(path, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            stream.seek(offset)
            data = _read_one(stream, offset, size, name)
    except OSError as exc:
        raise InputError(f"{name}: cannot read the file ({exc.strerror or exc})") from None
    if data is None:
        raise CorruptRecordError(f"{name}: no record at byte {offset} (the file has shrunk)")
    return data
