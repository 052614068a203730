"""Hostile and broken inputs, and the checks of what we make of them.

Shared by the hostile-input suite (``test_hostile.py``) and the property tests
(``test_properties.py``).  Every builder writes one input into a directory and returns its
path.  Graphs are made with TensorBoard's own protos (``tensorboard.compat.proto``) and event
files with TensorBoard's own TFRecord writer, never with graphviz_tb's code, so a bug in our
readers cannot hide itself by producing the very bytes it expects.

Each :class:`Case` says what the tool must do with its input: draw it (``ok``, warnings allowed),
refuse it with one error line (``error``), or either of the two (``either``), e.g. for bytes
that protobuf may or may not accept.
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import struct
import subprocess
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tensorboard.compat.proto import (
    attr_value_pb2,
    event_pb2,
    graph_pb2,
    meta_graph_pb2,
    node_def_pb2,
    tensor_pb2,
    tensor_shape_pb2,
    types_pb2,
)
from tensorboard.summary.writer.record_writer import RecordWriter

__all__ = [
    "BIG_CONST_BYTES",
    "BROWSER_ARGS",
    "CASES",
    "HOSTILE_NAMES",
    "Case",
    "browser_session",
    "dot_problems",
    "event_bytes",
    "graph_def",
    "node",
    "page_problems",
    "svg_problems",
    "svg_titles",
    "write_pb",
]

#: Names that try to break out of every format we write: XML/HTML, DOT strings and HTML-like
#: labels, JSON in a script tag, terminals (escape sequences), and line-based messages.
HOSTILE_NAMES: tuple[str, ...] = (
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    '<img src=x onerror="window.__pwned=1">',
    "<svg onload=window.__pwned=1>",
    "javascript:window.__pwned=1",
    "</script><script>alert(2)</script>",
    "<!--<script>alert(3)//-->",
    "]]><![CDATA[",
    "&amp;&lt;&#x3c;&#0;",
    "it's \"quoted\" 'twice'",
    "back\\slash\\",
    "\\N\\G\\E\\T\\H\\L\\n\\l\\r",  # DOT escString escapes: must show literally
    "{record|<port> label}",
    "new\nline",
    "carriage\rreturn\r\n",
    "tab\there",
    "\t",  # Graphviz rejects a label of only tabs
    "]",  # ... or of only "]" (found by the property tests)
    "nul\x00bell\x07esc\x1b[2J\x1b]0;title\x07del\x7f",
    "c1\x85\x9b31m",
    "日本語の層",
    "émoji 🎉 ünïcödé",
    "rtl\u202eevil\u202c",
    "sep\u2028line\u2029para",
    "zero\u200bwidth\ufeffbom",
    "\ufffe\uffff",
    "percent %s %n %x {0} ${jndi:x}",
    "   spaces   ",
    "x:0",
    "^caret",
    "a:b:c",
)

#: The size of the large constant (the issue asks for 60 MB).
BIG_CONST_BYTES = 60 * 1024 * 1024


# --------------------------------------------------------------------------- graph builders


def _attr_type(dtype: int) -> attr_value_pb2.AttrValue:
    return attr_value_pb2.AttrValue(type=dtype)


def node(name: str, op: str = "Identity", inputs: Iterable[str] = (), *,
         device: str = "", attrs: dict[str, attr_value_pb2.AttrValue] | None = None
         ) -> node_def_pb2.NodeDef:
    """One NodeDef; ``T=float32`` unless ``attrs`` says otherwise."""
    nd = node_def_pb2.NodeDef(name=name, op=op, input=list(inputs), device=device)
    for key, value in (attrs or {"T": _attr_type(types_pb2.DT_FLOAT)}).items():
        nd.attr[key].CopyFrom(value)
    return nd


def graph_def(nodes: Iterable[node_def_pb2.NodeDef]) -> graph_pb2.GraphDef:
    gd = graph_pb2.GraphDef()
    gd.node.extend(nodes)
    gd.versions.producer = 1087
    return gd


def write_pb(path: Path, gd: graph_pb2.GraphDef) -> Path:
    path.write_bytes(gd.SerializeToString())
    return path


def _shape(*dims: int, unknown_rank: bool = False) -> tensor_shape_pb2.TensorShapeProto:
    return tensor_shape_pb2.TensorShapeProto(
        dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in dims],
        unknown_rank=unknown_rank)


def _output_shapes(*shapes: tensor_shape_pb2.TensorShapeProto) -> attr_value_pb2.AttrValue:
    value = attr_value_pb2.AttrValue()
    value.list.shape.extend(shapes)
    return value


# --------------------------------------------------------------------------- the graphs


def hostile_names_graph() -> graph_pb2.GraphDef:
    """Every hostile name as an op, as a scope, as an op type, device and attribute string,
    wired in a chain so every name is also an edge end (titles, tooltips, labels)."""
    nodes = [node("input", "Placeholder", attrs={
        "dtype": _attr_type(types_pb2.DT_FLOAT),
        "shape": attr_value_pb2.AttrValue(shape=_shape(-1, 784)),
    })]
    previous = "input"
    for i, text in enumerate(HOSTILE_NAMES):
        attrs = {
            "T": _attr_type(types_pb2.DT_FLOAT),
            "note": attr_value_pb2.AttrValue(s=text.encode("utf-8")),
            "raw": attr_value_pb2.AttrValue(s=b"\xff\xfe<script>\x00" + bytes(range(256))),
            "_output_shapes": _output_shapes(_shape(-1, 784)),
        }
        nodes.append(node(text, "Identity", [previous], device=text, attrs=attrs))
        scoped = f"{text}/inner{i}"
        nodes.append(node(scoped, text, [text, f"^{previous}"], attrs=attrs))
        previous = scoped
    return graph_def(nodes)


def long_names_graph() -> graph_pb2.GraphDef:
    """5,000-character names: one flat, one as a scope, one of 50 nested 99-letter scopes and
    one of wide characters."""
    flat = "n" * 5000
    scoped = "s" * 5000 + "/" + "op" * 2500
    slashes = "/".join(["d" * 99] * 50) + "x"  # 50 nested scopes, 5,000 characters
    wide = "é🎉" * 2500
    return graph_def([
        node(flat, "Placeholder", attrs={"dtype": _attr_type(types_pb2.DT_FLOAT)}),
        node(scoped, "Identity", [flat]),
        node(slashes, "Identity", [scoped]),
        node(wide, "Identity" * 600, [slashes, f"^{flat}"]),
    ])


def big_const_graph() -> graph_pb2.GraphDef:
    """A 60 MB constant (``tensor_content``) and constants whose value lists lie about their
    shape, beside a small consumer; none of those bytes may reach an output."""
    content = bytes(range(256)) * (BIG_CONST_BYTES // 256)
    big = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT,
                                 tensor_shape=_shape(BIG_CONST_BYTES // 4),
                                 tensor_content=content)
    liar = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape=_shape())
    liar.float_val.extend([1.5] * 500_000)  # "scalar", half a million values
    strings = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, tensor_shape=_shape(2))
    strings.string_val.extend([b"<script>" * 200_000, b"\xff" * 100_000])
    long_attr = attr_value_pb2.AttrValue(s=b"A" * 3_000_000)
    return graph_def([
        node("weights/big", "Const", attrs={
            "dtype": _attr_type(types_pb2.DT_FLOAT),
            "value": attr_value_pb2.AttrValue(tensor=big)}),
        node("weights/liar", "Const", attrs={
            "dtype": _attr_type(types_pb2.DT_FLOAT),
            "value": attr_value_pb2.AttrValue(tensor=liar)}),
        node("weights/strings", "Const", attrs={
            "dtype": _attr_type(types_pb2.DT_STRING),
            "value": attr_value_pb2.AttrValue(tensor=strings)}),
        node("model/matmul", "MatMul", ["weights/big", "weights/liar"],
             attrs={"T": _attr_type(types_pb2.DT_FLOAT), "doc": long_attr}),
        node("model/out", "Identity", ["model/matmul", "weights/strings"]),
    ])


def deep_scopes_graph(depth: int = 3000) -> graph_pb2.GraphDef:
    """Scopes nested ``depth`` deep, with an op at every level feeding the next one down."""
    nodes = []
    scope = ""
    previous = None
    for level in range(depth):
        scope = f"{scope}s{level}/" if scope else f"s{level}/"
        nodes.append(node(f"{scope}op", "Identity", [previous] if previous else []))
        previous = f"{scope}op"
    nodes.append(node("sink", "Identity", [previous]))  # an edge spanning all the levels
    return graph_def(nodes)


def wide_scope_graph(width: int = 20_000) -> graph_pb2.GraphDef:
    """One scope with ``width`` children whose names neither number nor share prefixes
    (so no series or prefix group shrinks them), chained in pairs, plus an outside consumer."""
    rng = random.Random(7)
    letters = "abcdefghijklmnopqrstuvwxyz"
    names = set()
    while len(names) < width:
        names.add("".join(rng.choice(letters) for _ in range(10)))
    ordered = sorted(names)
    nodes = []
    for i, name in enumerate(ordered):
        inputs = [f"wide/{ordered[i - 1]}"] if i % 2 else []
        nodes.append(node(f"wide/{name}", "Relu" if i % 3 else "Identity", inputs))
    nodes.append(node("outside", "AddN", [f"wide/{n}" for n in ordered[:50]]))
    return graph_def(nodes)


def bad_wiring_graph() -> graph_pb2.GraphDef:
    """Dangling inputs, duplicate names, self-loops, 2-cycles and malformed input strings."""
    return graph_def([
        node("a", "Placeholder", attrs={"dtype": _attr_type(types_pb2.DT_FLOAT)}),
        node("dangling", "Add", ["a", "nowhere", "scope/also_nowhere:3", "^ghost"]),
        node("dup", "Identity", ["a"]),
        node("dup", "Relu", ["a"]),
        node("dup", "Relu", ["dup"]),
        node("self", "Add", ["self", "self:1", "^self"]),
        node("ping", "Identity", ["pong"]),
        node("pong", "Identity", ["ping"]),
        node("bad_index", "AddN", ["a:-1", "a:abc", "", "^", "a:", ":0", "a:1:2:3",
                                   "^^a", "a:99999999999999999999999", "a: 1", "a:０"]),
        node("colon:name", "Identity", ["a"]),
        node("uses_colon", "Identity", ["colon:name", "colon:name:0"]),
        node("", "Identity", ["a"]),  # an op without a name
        node("noop_type", "", ["a"]),  # an op without a type
        node("scope", "Identity", ["a"]),  # an op whose name is also a scope
        node("scope/child", "Identity", ["scope"]),
        node("//slashes///", "Identity", ["scope/child"]),
        node("/", "Identity", ["//slashes///"]),
    ])


def hostile_shapes_graph() -> graph_pb2.GraphDef:
    """Shapes and dtypes no real graph has: huge and negative dimensions, 5,000 dimensions,
    unknown dtypes, empty attribute lists and NaN/inf attribute values."""
    weird = {
        "T": _attr_type(9999),
        "_output_shapes": _output_shapes(_shape(2 ** 62, 2 ** 62, -7), _shape(*([1] * 5000)),
                                         _shape(unknown_rank=True)),
        "f": attr_value_pb2.AttrValue(f=float("nan")),
        "g": attr_value_pb2.AttrValue(f=float("inf")),
        "empty": attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue()),
        "fn": attr_value_pb2.AttrValue(func=attr_value_pb2.NameAttrList(name="<missing>")),
    }
    return graph_def([
        node("x", "Placeholder", attrs=weird),
        node("y", "Split", ["x", "x:1", "x:2", "x:7"], attrs=weird),
        node("call", "StatefulPartitionedCall", ["y"], attrs={
            "f": attr_value_pb2.AttrValue(func=attr_value_pb2.NameAttrList(name="nope"))}),
        node("loop", "While", ["y:1"], attrs={
            "body": attr_value_pb2.AttrValue(func=attr_value_pb2.NameAttrList(name="b")),
            "cond": attr_value_pb2.AttrValue(func=attr_value_pb2.NameAttrList(name="c"))}),
    ])


# --------------------------------------------------------------------------- event files


def event_bytes(events: Iterable[event_pb2.Event]) -> bytes:
    """Events as a TFRecord file, written by TensorBoard's own record writer."""
    buffer = io.BytesIO()
    writer = RecordWriter(buffer)
    for event in events:
        writer.write(event.SerializeToString())
    return buffer.getvalue()


def _event_file(directory: Path, gd: graph_pb2.GraphDef) -> tuple[Path, bytes]:
    data = event_bytes([
        event_pb2.Event(wall_time=1.0, file_version="brain.Event:2"),
        event_pb2.Event(wall_time=2.0, step=0, graph_def=gd.SerializeToString()),
    ])
    path = directory / "events.out.tfevents.1.host"
    return path, data


def _small_graph() -> graph_pb2.GraphDef:
    return graph_def([
        node("x", "Placeholder", attrs={"dtype": _attr_type(types_pb2.DT_FLOAT)}),
        node("layer/relu", "Relu", ["x"]),
        node("layer/out", "Identity", ["layer/relu"]),
    ])


# --------------------------------------------------------------------------- other containers


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _hostile_meta() -> bytes:
    """A MetaGraphDef of the hostile graph, with hostile tags and signature names."""
    meta = meta_graph_pb2.MetaGraphDef()
    meta.graph_def.CopyFrom(hostile_names_graph())
    meta.meta_info_def.tags.extend(["serve", "<script>alert(1)</script>"])
    signature = meta.signature_def['<img src=x onerror="window.__pwned=1">']
    signature.inputs["in\n<b>bold</b>"].name = "input:0"
    signature.outputs["out\x1b[2J"].name = "<script>alert(1)</script>/inner0:0"
    return meta.SerializeToString()


def _saved_model(d: Path, meta: bytes) -> Path:
    """A SavedModel directory, its two-field container (schema version, meta graphs) written
    as raw wire format: TensorBoard's protos do not include saved_model.proto."""
    directory = d / "saved_model_dir"
    directory.mkdir()
    (directory / "saved_model.pb").write_bytes(b"\x08\x01\x12" + _varint(len(meta)) + meta)
    return directory


def _garbage_saved_model(d: Path) -> Path:
    directory = d / "bad_saved_model"
    directory.mkdir()
    (directory / "saved_model.pb").write_bytes(random.Random(3).randbytes(3000))
    return directory


def _keras_config() -> bytes:
    """A ``model.to_json()`` config whose model, layer and class names are hostile, with a
    nested model."""
    layers: list[dict[str, Any]] = [{"class_name": "InputLayer", "config": {
        "name": "in<b>", "batch_input_shape": [None, 3], "dtype": "float32"}}]
    for name in HOSTILE_NAMES[:12]:
        layers.append({"class_name": f"Dense{name[:16]}",
                       "config": {"name": name, "units": 4, "activation": name}})
    layers.append({"class_name": "Sequential", "config": {"name": "nested</script>", "layers": [
        {"class_name": "Dense", "config": {"name": "inner<svg onload=x>", "units": 2}}]}})
    config = {"class_name": "Sequential", "config": {"name": "<svg onload=x>", "layers": layers}}
    return json.dumps(config).encode()


def _deep_keras_config() -> bytes:
    """A Keras config nested 5,000 objects deep (Python's JSON parser recurses)."""
    return (b'{"class_name": "Functional", "config": ' + b'{"a": ' * 5000 + b"1"
            + b"}" * 5000 + b"}")


def _deep_text_proto() -> bytes:
    """A text GraphDef whose attribute nests 3,000 function attributes deep (protobuf's text
    parser recurses; its binary parser stops at 100 levels by itself)."""
    opening = 'func { name: "f" attr { key: "k" value { ' * 3000
    closing = " } } }" * 3000
    return (f'node {{ name: "a" op: "X" attr {{ key: "k" value {{ {opening}i: 1{closing} }} }} }}'
            .encode())


# --------------------------------------------------------------------------- the cases


@dataclass(frozen=True)
class Case:
    """One hostile input: how to build it, what the tool must do, and how heavy it is."""

    name: str
    build: Callable[[Path], Path]
    expect: str  # "ok", "error" or "either"
    heavy: bool = False  # big inputs: fewer output formats in the every-command sweep


def _pb(file_name: str, make: Callable[[], graph_pb2.GraphDef]) -> Callable[[Path], Path]:
    return lambda d: write_pb(d / file_name, make())


def _raw(file_name: str, data: Callable[[], bytes]) -> Callable[[Path], Path]:
    def build(d: Path) -> Path:
        path = d / file_name
        path.write_bytes(data())
        return path

    return build


def _png() -> bytes:
    """A real (tiny, valid) PNG: signature, IHDR, IDAT, IEND."""
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr)
            + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b""))


def _cut_pb() -> bytes:
    """A real GraphDef cut inside a string field, so protobuf cannot decode it."""
    data = graph_def([node("a" * 200, "Placeholder"), node("b" * 200, "Identity", ["a" * 200])]
                     ).SerializeToString()
    return data[: len(data) // 2]


def _invalid_utf8_pb() -> bytes:
    """A GraphDef whose node name is not UTF-8 (proto3 strings must be)."""
    name = b"bad\xff\xfename"
    nd = b"\x0a" + bytes([len(name)]) + name + b"\x12\x08Identity"
    return b"\x0a" + bytes([len(nd)]) + nd


_GARBAGE_TEXT = (
    "# a text GraphDef that goes wrong on line 4\n"
    "node {\n"
    '  name: "a"\n'
    '  op: "Placeholder" <script>alert(1)</script>\n'
    "}\n"
)


def _flipped_event(d: Path) -> Path:
    path, data = _event_file(d, _small_graph())
    damaged = bytearray(data)
    damaged[len(damaged) - 10] ^= 0x40  # inside the graph record's data: data CRC fails
    path.write_bytes(bytes(damaged))
    return path


def _flipped_length(d: Path) -> Path:
    path, data = _event_file(d, _small_graph())
    damaged = bytearray(data)
    damaged[0] ^= 0x01  # the first record's length: length CRC fails
    path.write_bytes(bytes(damaged))
    return path


def _cut_event(d: Path) -> Path:
    path, data = _event_file(d, _small_graph())
    path.write_bytes(data[: len(data) - 7])
    return path


def _good_event(d: Path) -> Path:
    path, data = _event_file(d, hostile_names_graph())
    path.write_bytes(data)
    return path


def _logdir_with_bad_run(d: Path) -> Path:
    logdir = d / "logs"
    (logdir / "good").mkdir(parents=True)
    (logdir / "bad").mkdir()
    _good = _event_file(logdir / "good", _small_graph())
    _good[0].write_bytes(_good[1])
    _flipped_event(logdir / "bad")
    return logdir


def _empty_logdir(d: Path) -> Path:
    logdir = d / "empty_logdir"
    (logdir / "run1").mkdir(parents=True)
    return logdir


def _logdir_no_graph(d: Path) -> Path:
    logdir = d / "scalars_only"
    logdir.mkdir()
    path = logdir / "events.out.tfevents.2.host"
    path.write_bytes(event_bytes([event_pb2.Event(wall_time=1.0, file_version="brain.Event:2")]))
    return logdir


CASES: tuple[Case, ...] = (
    Case("hostile_names", _pb("hostile.pb", hostile_names_graph), "ok"),
    Case("hostile_names_text", lambda d: _text_pb(d / "hostile.pbtxt", hostile_names_graph()),
         "ok"),
    Case("long_names", _pb("long.pb", long_names_graph), "ok"),
    Case("bad_wiring", _pb("wiring.pb", bad_wiring_graph), "ok"),
    Case("hostile_shapes", _pb("shapes.pb", hostile_shapes_graph), "ok"),
    Case("big_const", _pb("big.pb", big_const_graph), "ok", heavy=True),
    Case("deep_scopes", _pb("deep.pb", deep_scopes_graph), "ok", heavy=True),
    Case("wide_scope", _pb("wide.pb", wide_scope_graph), "ok", heavy=True),
    Case("event_file", _good_event, "ok"),
    Case("random_bytes", _raw("random.pb", lambda: random.Random(1).randbytes(4096)), "error"),
    Case("random_bytes_small", _raw("tiny.pb", lambda: b"\x08\x96\x01"), "error"),
    Case("png_renamed", _raw("image.pb", _png), "error"),
    Case("empty_file", _raw("empty.pb", lambda: b""), "error"),
    Case("whitespace_text", _raw("blank.pbtxt", lambda: b"  \n# only a comment\n\n"), "error"),
    Case("cut_protobuf", _raw("cut.pb", _cut_pb), "error"),
    Case("invalid_utf8_name", _raw("utf8.pb", _invalid_utf8_pb), "either"),
    Case("garbage_text", _raw("garbage.pbtxt", lambda: _GARBAGE_TEXT.encode()), "error"),
    Case("binary_as_text", _raw("binary.pbtxt", lambda: bytes(range(256)) * 8), "error"),
    Case("html_renamed", _raw("page.pb", lambda: b"<html><script>alert(1)</script></html>"),
         "error"),
    Case("event_bad_crc", _flipped_event, "error"),
    Case("event_bad_length_crc", _flipped_length, "error"),
    Case("event_cut_short", _cut_event, "error"),
    Case("logdir_bad_run", _logdir_with_bad_run, "error"),
    Case("empty_logdir", _empty_logdir, "error"),
    Case("logdir_without_graph", _logdir_no_graph, "error"),
    Case("missing_path", lambda d: d / "does_not_exist.pb", "error"),
    Case("metagraph_hostile", _raw("hostile.meta", _hostile_meta), "ok"),
    Case("saved_model_hostile", lambda d: _saved_model(d, _hostile_meta()), "ok"),
    Case("saved_model_garbage", _garbage_saved_model, "error"),
    Case("keras_config_hostile", _raw("model.json", _keras_config), "ok"),
    Case("deep_json", _raw("deep.json", lambda: b"[" * 100_000 + b"]" * 100_000), "error"),
    Case("deep_keras_config", _raw("deep_model.json", _deep_keras_config), "error"),
    Case("deep_text_proto", _raw("deep.pbtxt", _deep_text_proto), "error"),
)


def _text_pb(path: Path, gd: graph_pb2.GraphDef) -> Path:
    from google.protobuf import text_format

    path.write_text(text_format.MessageToString(gd, as_utf8=True), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- checking outputs

SVG_NS = "{http://www.w3.org/2000/svg}"
#: Elements that run code or pull in other documents; none may appear in our SVG.
_ACTIVE_ELEMENTS = frozenset({"script", "foreignObject", "iframe", "object", "embed", "handler",
                              "animate", "set", "use"})
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run",
                "--disable-quic"]


def svg_problems(data: bytes) -> list[str]:
    """What is wrong with an SVG we wrote: not well-formed XML, a ``<script`` anywhere (even
    in text, which would mean a name went in unescaped), an active element, an event-handler
    attribute or a ``javascript:`` link.  Empty when all is well."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        return [f"not well-formed XML: {exc}"]
    problems = []
    if b"<script" in data.lower():
        problems.append("a raw '<script' in the file")
    for el in root.iter():
        tag = el.tag.rsplit("}", 1)[-1]
        if tag in _ACTIVE_ELEMENTS:
            problems.append(f"a <{tag}> element")
        for key, value in el.attrib.items():
            name = key.rsplit("}", 1)[-1].lower()
            if name.startswith("on"):
                problems.append(f"an event handler {name}={value!r}")
            if name == "href" and value.strip().lower().startswith("javascript:"):
                problems.append(f"a javascript: link {value!r}")
    return problems


def svg_titles(data: bytes, kind: str) -> list[str]:
    """The ``<title>`` texts of the drawn nodes whose class includes ``kind`` (``op``,
    ``group``, ``series``), i.e. the full names as the SVG shows them."""
    out = []
    for g in ET.fromstring(data).iter(f"{SVG_NS}g"):
        classes = g.get("class", "").split()
        if "node" in classes and kind in classes:
            title = g.find(f"{SVG_NS}title")
            out.append("" if title is None or title.text is None else title.text)
    return out


def op_titles(h: Any) -> list[str]:
    """The title each op of hierarchy ``h`` owes the picture, one box each: its full name, or
    ``name/(label)`` for an op whose name is also a scope's (as TensorBoard names it)."""
    return sorted(f"{n}/({op.label})" if n in h.groups else n for n, op in h.ops.items())


def dot_problems(path: Path) -> list[str]:
    """Graphviz's complaints when it draws a DOT file we wrote with ``neato -n2`` (as a user
    would re-render it); empty when it parses and draws."""
    proc = subprocess.run(["neato", "-n2", "-Tsvg", str(path)], capture_output=True,
                          check=False, timeout=300)
    if proc.returncode != 0 or not proc.stdout.startswith(b"<?xml"):
        return [proc.stderr.decode("utf-8", "replace").strip() or "no output"]
    return []


def browser_session() -> Iterator[Any]:
    """Body of the ``browser`` fixture (conftest.py): Debian's headless Chromium through
    Playwright, never a downloaded browser.  Without Playwright or Chromium the browser tests
    skip on a developer machine, and fail in CI (``CI`` set), where nothing may be skipped."""
    import pytest

    ci = bool(os.environ.get("CI"))
    chromium = shutil.which("chromium")
    if chromium is None:
        message = "Debian's chromium is not on PATH (make test installs it)"
        if ci:
            pytest.fail(message)
        pytest.skip(message)
    if ci:
        import playwright.sync_api as sync_api
    else:
        sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=BROWSER_ARGS)
        yield browser
        browser.close()


def page_problems(browser: Any, path: Path, timeout: float = 30.0) -> list[str]:
    """Open a viewer page from ``file://`` and list what went wrong: script errors (including
    the Content-Security-Policy refusing injected code), dialogs (``alert``), requests leaving
    the page, a page that never gets ready, or scripts beyond the three we write."""
    problems: list[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 860})

    def route(r: Any) -> None:
        if r.request.url.startswith(("file:", "data:", "blob:")):
            r.continue_()
        else:
            problems.append(f"request left the page: {r.request.url}")
            r.abort()

    def dialog(d: Any) -> None:
        problems.append(f"dialog: {d.message}")
        d.dismiss()

    page.route("**/*", route)
    page.on("dialog", dialog)
    page.on("pageerror", lambda e: problems.append(f"pageerror: {e}"))
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}")
            if m.type == "error" else None)
    try:
        page.goto(path.resolve().as_uri())
        end = time.monotonic() + timeout
        # Polled from outside: the page's CSP rightly forbids evaluating strings inside it.
        while not page.evaluate("Boolean(window.tbgraph && window.tbgraph.ready === true)"):
            if problems or time.monotonic() > end:
                problems.append("the viewer never became ready")
                break
            time.sleep(0.05)
        scripts = page.evaluate("document.querySelectorAll('script').length")
        if scripts != 3:
            problems.append(f"{scripts} script elements (we write 3)")
        if page.evaluate("typeof window.__pwned !== 'undefined'"):
            problems.append("injected code ran (window.__pwned is set)")
    finally:
        page.close()
    return problems
