"""Serialized NodeDefs read from their wire format, as protobuf reads them.

The page reads each distinct NodeDef's op type and attributes by cutting its bytes apart
(:func:`graphviz_tb.read.attrs.serialized_attrs`) rather than parsing it, and works an op's
outputs out from :data:`~graphviz_tb.model.shapes.OUTPUT_ATTRS` alone.  What must hold:

* for any NodeDef, merged NodeDefs (repeated keys) and any cut of one, the reader gives what
  parsing the bytes gives, or None exactly where protobuf refuses them;
* a layout the reader does not follow gives None, never a wrong answer;
* every NodeDef of the samples and the corpus has the outputs its output attributes give;
* the page is the same whether its NodeDefs are cut apart or parsed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.message import DecodeError
from hypothesis import given, settings
from hypothesis import strategies as st
from svgparse import SAMPLES
from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.node_def_pb2 import NodeDef

import graphviz_tb
from graphviz_tb.draw import viewer_ops
from graphviz_tb.errors import GraphvizTbError
from graphviz_tb.model.graph import BARE, node_def_of
from graphviz_tb.model.shapes import OUTPUT_ATTRS, node_outputs, outputs_of
from graphviz_tb.read.attrs import serialized_attrs

HERE = Path(__file__).resolve().parent
CONFORMANCE = HERE / "conformance"
CORPUS = HERE.parents[1] / "shared" / "corpus"

_text = st.text(max_size=12)
_shape = st.lists(st.integers(-1, 2**40), max_size=4)


def _attr(kind: str, value: Any) -> AttrValue:
    a = AttrValue()
    if kind == "s":
        a.s = value.encode()
    elif kind == "i":
        a.i = value
    elif kind == "f":
        a.f = value
    elif kind == "b":
        a.b = value
    elif kind == "type":
        a.type = value
    elif kind == "shape":
        for d in value:
            a.shape.dim.add(size=d)
    elif kind == "tensor":
        a.tensor.dtype = 3
        for d in value:
            a.tensor.tensor_shape.dim.add(size=d)
        a.tensor.tensor_content = bytes(len(value))
    elif kind == "list":
        a.list.type.extend(value)
    elif kind == "func":
        a.func.name = value
    return a


_values = st.one_of(
    st.tuples(st.just("s"), _text), st.tuples(st.just("i"), st.integers(-2**63, 2**63 - 1)),
    st.tuples(st.just("f"), st.floats(width=32, allow_nan=False)),
    st.tuples(st.just("b"), st.booleans()), st.tuples(st.just("type"), st.integers(0, 30)),
    st.tuples(st.just("shape"), _shape), st.tuples(st.just("tensor"), _shape),
    st.tuples(st.just("list"), st.lists(st.integers(1, 20), max_size=5)),
    st.tuples(st.just("func"), _text))
_keys = st.one_of(st.sampled_from([*sorted(OUTPUT_ATTRS), "_class", ""]), _text)


@st.composite
def node_defs(draw: Any) -> bytes:
    """A serialized NodeDef with every field NodeDef has, attributes of every kind."""
    nd = NodeDef(name=draw(_text), op=draw(_text), device=draw(_text))
    nd.input.extend(draw(st.lists(_text, max_size=3)))
    for key, (kind, value) in draw(st.dictionaries(_keys, _values, max_size=6)).items():
        nd.attr[key].CopyFrom(_attr(kind, value))
    if draw(st.booleans()):
        nd.experimental_debug_info.original_node_names.append(draw(_text))
    return nd.SerializeToString()


def _parsed(raw: bytes) -> tuple[str, list[tuple[str, bytes]]] | None:
    """What protobuf reads: None where it refuses the bytes."""
    try:
        nd = NodeDef.FromString(raw)
    except DecodeError:
        return None
    return nd.op, [(k, nd.attr[k].SerializeToString()) for k in sorted(nd.attr)]


@settings(max_examples=300, deadline=None)
@given(st.lists(node_defs(), min_size=1, max_size=3))
def test_the_reader_gives_what_protobuf_parses(raws: list[bytes]) -> None:
    """One NodeDef, or several written one after another (protobuf merges them: the last op
    type, and each attribute's last value)."""
    raw = b"".join(raws)
    assert serialized_attrs(raw) == _parsed(raw)
    assert serialized_attrs(BARE + raw, 1) == _parsed(raw)


@settings(max_examples=60, deadline=None)
@given(node_defs())
def test_a_cut_nodedef_is_refused_where_protobuf_refuses_it(raw: bytes) -> None:
    for end in range(len(raw)):
        got = serialized_attrs(raw[:end])
        want = _parsed(raw[:end])
        assert got == want or (got is None and want is not None), end


def test_an_entry_protobuf_would_merge_is_left_to_protobuf() -> None:
    """A map entry holding its value twice is merged by protobuf's parser: the reader says it
    cannot read it rather than choose one."""
    first = AttrValue(s=b"a").SerializeToString()
    second = AttrValue(i=3).SerializeToString()
    entry = (b"\x0a\x01T" + b"\x12" + bytes([len(first)]) + first
             + b"\x12" + bytes([len(second)]) + second)
    raw = b"\x12\x03Add" + b"\x2a" + bytes([len(entry)]) + entry
    assert serialized_attrs(raw) is None
    assert _parsed(raw) == ("Add", [("T", AttrValue(s=b"a", i=3).SerializeToString())])


def _node_defs() -> Iterator[tuple[str, Any]]:
    """Every NodeDef, function bodies' too, of the samples, the conformance graphs and the
    corpus (when there): graphs TensorFlow and other projects wrote."""
    files = [*SAMPLES.glob("*.pb"), *SAMPLES.glob("*.pbtxt"), *CONFORMANCE.rglob("*.gz")]
    if CORPUS.is_dir():
        files += [*CORPUS.rglob("*.pb"), *CORPUS.rglob("*.pbtxt")]
    for path in sorted(files):
        try:
            model = graphviz_tb.load(path).model
        except GraphvizTbError:
            continue  # refused on purpose: the conformance tests say why
        for name in model.g:
            node_def = node_def_of(model.g.nodes[name])
            if node_def is not None:
                yield f"{path.name}: {name}", node_def


def test_every_nodedef_has_the_outputs_its_output_attributes_give() -> None:
    """:data:`OUTPUT_ATTRS` names every attribute an op's outputs follow from: ops are given
    the outputs of the first op alike in these, so one left out would mislabel edges."""
    checked = 0
    for where, nd in _node_defs():
        kept = {k: nd.attr[k] for k in nd.attr if k in OUTPUT_ATTRS}
        assert outputs_of(nd.op, kept) == node_outputs(nd), where
        checked += 1
    # The samples and conformance graphs alone hold about 570; the corpus, when there, 10,000s.
    assert checked > (10_000 if CORPUS.is_dir() else 500)


@pytest.mark.parametrize("sample", ["mnist_tf1.pb", "control_flow_v2.pb"])
def test_the_page_is_the_same_whether_nodedefs_are_cut_or_parsed(
        sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every attribute and output on the page, read either way (the parse is what the reader
    falls back to)."""
    graph = graphviz_tb.load(SAMPLES / sample)
    cut = graph.render(format="html")
    graph = graphviz_tb.load(SAMPLES / sample)
    monkeypatch.setattr(viewer_ops, "serialized_attrs", lambda raw, start=0: None)
    assert graph.render(format="html") == cut
