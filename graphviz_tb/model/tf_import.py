"""Importing the graph into TensorFlow for its shape inference, scope by scope, so one op that
TensorFlow refuses costs its scope's shapes, not the whole graph's."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..read.dtypes import dtype_name
from ..read.savedmodel import OBJECT_PATH
from .graph import parse_input, reachable
from .shapes import TensorInfo

__all__ = ["Importer", "ScopeResult", "info_of"]


class _ImportFailed(Exception):
    """TensorFlow refused a GraphDef; ``args[0]`` is its message."""


@dataclass
class ScopeResult:
    """Inference over one GraphDef (the top level, or one instantiated function body)."""

    infos: dict[str, list[TensorInfo]] = field(default_factory=dict)
    #: (local op name, TensorFlow's message), in the order they were met.
    culprits: list[tuple[str, str]] = field(default_factory=list)
    graph: Any = None  # the last tf.Graph imported, for reading function outputs
    #: A body's tensor names as its FunctionDef spells them -> as the imported graph does.
    flat_names: dict[str, str] = field(default_factory=dict)
    #: (local op name, output) -> HandleData: what a resource or variant handle points to
    #: (a variable's shape), to hand on to the function bodies it is passed to.
    handles: dict[tuple[str, int], Any] = field(default_factory=dict)


class Importer:
    """Imports one GraphDef, or subsets of its nodes, into fresh ``tf.Graph`` objects, and
    finds the ops that make the import fail.

    The GraphDef is prepared in place first (see :func:`_prepare`); names TensorFlow refuses
    are renamed for the import and reported under their own names again.  ``feeds`` names
    placeholders (a function body's resource arguments) to create by hand with the handle
    data TensorFlow cannot read from a GraphDef, so reads of a variable inside a body get its
    shape, as they do when TensorFlow infers through the call itself.
    """

    def __init__(self, tf: Any, graph_def: Any, feeds: dict[str, Any] | None = None) -> None:
        self.tf, self.graph_def = tf, graph_def
        self.safe_names = _prepare(graph_def)
        self.original = {safe: name for name, safe in self.safe_names.items()}
        self.feeds = {self.safe_names.get(name, name): handle
                      for name, handle in (feeds or {}).items()}

    def graph(self, nodes: Iterable[Any] | None = None) -> Any:
        """Import ``nodes`` (default: the whole GraphDef) with the library; raises
        :class:`_ImportFailed` with TensorFlow's message."""
        tf = self.tf
        graph_def = self.graph_def
        if nodes is not None or self.feeds:
            graph_def = tf.compat.v1.GraphDef()
            graph_def.versions.CopyFrom(self.graph_def.versions)
            graph_def.library.CopyFrom(self.graph_def.library)
            graph_def.node.extend(n for n in (self.graph_def.node if nodes is None else nodes)
                                  if n.name not in self.feeds)
        graph = tf.Graph()
        try:
            with graph.as_default():
                input_map = self._fed(graph_def)
                tf.graph_util.import_graph_def(graph_def, input_map=input_map or None, name="")
        except (ValueError, TypeError, KeyError, tf.errors.OpError) as exc:
            text = exc.message if isinstance(exc, tf.errors.OpError) else str(exc)
            raise _ImportFailed(" ".join(text.split())) from None
        return graph

    def _fed(self, graph_def: Any) -> dict[str, Any]:
        """Create the fed placeholders in the default graph; the input map that uses them."""
        if not self.feeds:
            return {}
        from tensorflow.python.ops import handle_data_util  # TensorFlow: only when inferring

        inputs = {text for node in graph_def.node for text in node.input}
        by_name = {n.name: n for n in self.graph_def.node if n.name in self.feeds}
        input_map: dict[str, Any] = {}
        for name, handle in self.feeds.items():
            attr = by_name[name].attr
            shape = attr["shape"].shape if "shape" in attr else None
            tensor = self.tf.raw_ops.Placeholder(dtype=attr["dtype"].type, shape=shape, name=name)
            handle_data_util.set_handle_data(tensor, handle)
            # import_graph_def refuses map entries nothing uses (a subset may not use them).
            if f"{name}:0" in inputs or name in inputs:
                input_map[f"{name}:0"] = tensor
            if f"^{name}" in inputs:
                input_map[f"^{name}"] = tensor  # TensorFlow takes the op from it
        return input_map

    def _restore(self, message: str) -> str:
        """TensorFlow's message with the ops' own names (longest first: ``_10`` before ``_1``)."""
        for safe in sorted(self.original, key=len, reverse=True):
            message = message.replace(safe, self.original[safe])
        return message

    def _read(self, graph: Any, result: ScopeResult) -> None:
        from tensorflow.python.ops import handle_data_util  # TensorFlow: only when inferring

        handle_types = (self.tf.resource, self.tf.variant)
        for op in graph.get_operations():
            name = self.original.get(op.name, op.name)
            result.infos[name] = [info_of(t) for t in op.outputs]
            for i, tensor in enumerate(op.outputs):
                if tensor.dtype in handle_types:
                    handle = handle_data_util.get_handle_data(tensor)
                    if handle is not None and handle.is_set and handle.shape_and_type:
                        result.handles[name, i] = handle

    def run(self) -> ScopeResult:
        """Import the GraphDef; on failure find the culprit, set it and its dependents aside,
        and import the rest again, up to :data:`_MAX_FAILURES` culprits."""
        result = ScopeResult()
        wiring: _Wiring | None = None  # built only when something fails
        remaining: set[str] = set()
        while True:
            try:
                graph = self.graph(None if wiring is None else wiring.nodes_in(remaining))
            except _ImportFailed as failed:
                if wiring is None:
                    self._check_library()
                    wiring = _Wiring(list(self.graph_def.node))
                    remaining = set(wiring.order)
                if len(result.culprits) >= _MAX_FAILURES:
                    return result
                culprit, message, partial = self._culprit(wiring, remaining, failed.args[0])
                result.culprits.append((self.original.get(culprit, culprit),
                                        self._restore(message)))
                if partial is not None:
                    self._read(partial, result)
                remaining -= wiring.descendants(culprit)
                continue
            self._read(graph, result)
            result.graph = graph
            return result

    def _check_library(self) -> None:
        """A failure no op causes (a broken function library) cannot be bisected."""
        try:
            self.graph([])
        except _ImportFailed as failed:
            raise InputError("TensorFlow could not import the graph's function library: "
                             f"{failed.args[0]}") from None

    def _fails(self, wiring: _Wiring, names: set[str]) -> tuple[str | None, Any]:
        """TensorFlow's message when importing ``names`` fails, else (None, the graph)."""
        try:
            return None, self.graph(wiring.nodes_in(names))
        except _ImportFailed as failed:
            return failed.args[0], None

    def _culprit(self, wiring: _Wiring, remaining: set[str], message: str
                 ) -> tuple[str, str, Any]:
        """The op that makes importing ``remaining`` fail, its message, and a graph of its
        ancestors (for the shapes that reach it)."""
        match = _NODE_IN_MESSAGE.search(message)
        named = next((n for n in match.groups() if n), None) if match else None
        if named in remaining:
            closure = wiring.ancestors([named]) & remaining
            error, partial = self._fails(wiring, closure - {named})
            if error is None:
                again, _ = self._fails(wiring, closure)
                if again is not None:
                    return named, again, partial
        # The name is ambiguous (a body op of the same name) or absent: bisect a topological
        # order; ancestor closures of its prefixes grow monotonically, and so do failures.
        order = [n for n in wiring.order if n in remaining]
        lo, hi, found = 1, len(order), message
        while lo < hi:
            mid = (lo + hi) // 2
            error, _ = self._fails(wiring, wiring.ancestors(order[:mid]) & remaining)
            if error is None:
                lo = mid + 1
            else:
                hi, found = mid, error
        culprit = order[lo - 1]
        closure = wiring.ancestors([culprit]) & remaining
        error, partial = self._fails(wiring, closure - {culprit})
        again, _ = self._fails(wiring, closure)
        if again is None:
            raise InputError(f"TensorFlow could not import the graph: {message}")
        return culprit, again if error is None else found, partial


class _Wiring:
    """Who feeds whom among one GraphDef's nodes (data and control), for closures and order."""

    def __init__(self, nodes: list[Any]) -> None:
        self.by_name = {n.name: n for n in nodes}
        self.inputs: dict[str, list[str]] = {}
        self.outputs: dict[str, list[str]] = {name: [] for name in self.by_name}
        for node in nodes:
            srcs = [parse_input(text).node for text in node.input]
            srcs = [s for s in srcs if s in self.by_name]
            self.inputs[node.name] = srcs
            for src in srcs:
                self.outputs[src].append(node.name)
        self.order = self._topological(nodes)

    def _topological(self, nodes: list[Any]) -> list[str]:
        """Kahn's order, ties in file order; ops on cycles (TF1 loops) follow in file order."""
        pending = {name: len(set(srcs)) for name, srcs in self.inputs.items()}
        ready = deque(n.name for n in nodes if pending[n.name] == 0)
        order: list[str] = []
        while ready:
            name = ready.popleft()
            order.append(name)
            for dst in dict.fromkeys(self.outputs[name]):
                pending[dst] -= 1
                if pending[dst] == 0:
                    ready.append(dst)
        placed = set(order)
        order.extend(n.name for n in nodes if n.name not in placed)
        return order

    def ancestors(self, names: Iterable[str]) -> set[str]:
        """``names`` and everything they depend on."""
        return reachable(names, self.inputs)

    def descendants(self, name: str) -> set[str]:
        """``name`` and everything that depends on it."""
        return reachable([name], self.outputs)

    def nodes_in(self, names: set[str]) -> list[Any]:
        return [self.by_name[n] for n in self.order if n in names]


#: Independent failures reported per graph or function body before giving up on the rest.
_MAX_FAILURES = 10


_NODE_IN_MESSAGE = re.compile(r"\{\{node ([^}]+)\}\}|[Nn]ode '([^']+)'|of node (\S+) was")


#: Op names TensorFlow's importer accepts.
_VALID_NAME = re.compile(r"[A-Za-z0-9.][A-Za-z0-9_.\-/>]*\Z")


def info_of(tensor: Any) -> TensorInfo:
    shape = tensor.shape
    dims = None if shape.rank is None else tuple(shape.as_list())
    return TensorInfo(dtype=dtype_name(tensor.dtype.as_datatype_enum), shape=dims,
                      known_shape=True)


def _prepare(graph_def: Any) -> dict[str, str]:
    """Make a GraphDef importable for shape inference alone; returns renamed -> safe names.

    Devices and colocation hints do not change shapes but can stop an import: a device
    string this TensorFlow cannot parse, or (in a subset import) a colocation with an op left
    out.  The calls the SavedModel reader added for uncalled methods are not TensorFlow's and
    are dropped (their bodies are inferred on their own).  Names TensorFlow reserves or
    refuses (``_send_x``, ``Linear[fc1]``) are renamed.
    """
    invented = [i for i, node in enumerate(graph_def.node) if OBJECT_PATH in node.attr]
    for index in reversed(invented):  # calls we added for a SavedModel's methods
        del graph_def.node[index]
    renamed: dict[str, str] = {}
    taken = {node.name for node in graph_def.node}
    for node in graph_def.node:
        node.device = ""
        node.attr.pop("_class", None)
        if not _VALID_NAME.match(node.name):
            safe = f"tbgraph_renamed_{len(renamed)}"
            while safe in taken:
                safe += "_"
            renamed[node.name] = safe
    for fdef in graph_def.library.function:
        for node in fdef.node_def:
            node.device = ""
    if renamed:
        for node in graph_def.node:
            node.name = renamed.get(node.name, node.name)
            for i, text in enumerate(node.input):
                ref = parse_input(text)
                if ref.node in renamed:
                    node.input[i] = text.replace(ref.node, renamed[ref.node], 1)
    return renamed
