"""The viewer page's packed integer columns: each in its narrowest typecode, whichever way it
was narrowed (numpy for big 4-byte columns, ``array`` for the rest), and read back as written."""

from __future__ import annotations

import sys
from array import array
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphviz_tb.write import page

_INT32 = st.integers(-(2**31), 2**31 - 1)
#: Values at and around each typecode's edges, so the narrowest choice is tested where it turns.
_EDGES = st.sampled_from([-(2**31), -32769, -32768, -129, -128, -1, 0, 1, 127, 128, 32767,
                          32768, 2**31 - 1])


def _narrowed_from(column: array[int], threshold: int) -> tuple[str, bytes] | None:
    """The column narrowed with numpy taking columns of ``threshold`` values or more (a
    Hypothesis test cannot take pytest's function-scoped monkeypatch fixture)."""
    with pytest.MonkeyPatch.context() as m:
        m.setattr(page, "_NUMPY_FROM", threshold)
        return page._narrowed(column)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_INT32, _EDGES), min_size=1, max_size=300))
def test_numpy_and_array_narrow_a_column_alike(values: list[int]) -> None:
    column = array("i", values)
    by_numpy = _narrowed_from(column, 0)
    assert by_numpy == _narrowed_from(column, len(column) + 1)  # by array
    assert by_numpy is not None
    code, packed = by_numpy
    low, high = min(values), max(values)
    narrowest = ("b" if low >= -128 and high <= 127 else
                 "h" if low >= -32768 and high <= 32767 else "i")
    assert code == narrowest
    read = array(code, packed)
    if sys.byteorder == "big":
        read.byteswap()
    assert read.tolist() == values


def test_a_big_column_round_trips_through_the_page() -> None:
    """A column past the numpy threshold, packed and unpacked as the page data is."""
    n = page._NUMPY_FROM + 17
    columns: dict[str, Any] = {key: array("i", [0]) * n for key in page._PACKED}
    columns["parent"] = array("i", range(-1, n - 1))  # int32 needed
    columns["kind"] = array("i", [i % 14 - 7 for i in range(n)])  # int8 will do
    columns["sz"] = array("i", [i % 40_000 for i in range(n)])  # int16 will not
    columns["ec"] = [2**40] + [1] * (n - 1)  # a list beyond int32 stays JSON
    packed = {key: page._packed(column) for key, column in columns.items()}
    assert packed["parent"][0] == "i" and packed["kind"][0] == "b" and packed["sz"][0] == "i"
    assert packed["ec"] is columns["ec"]
    back = page._unpack(packed)
    for key in page._PACKED:
        assert list(back[key]) == list(columns[key]), key
