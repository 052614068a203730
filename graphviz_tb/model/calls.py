"""Open function calls into their bodies, so TF2 graphs show their computation.

TF2 keeps most of a model behind ``StatefulPartitionedCall``/``PartitionedCall`` (attribute
``f``), ``While`` (``cond``, ``body``), ``If`` (``then_branch``, ``else_branch``) and ``Case``
(``branches``), or behind ops named after a library function.  TensorBoard never follows these
(its issue #1936).  Here each call op keeps its place and its body is added under the call's
name: ``call/<node>`` for a plain call, ``call/body/<node>`` and ``call/cond/<node>`` for a loop,
``call/then/...``, ``call/else/...`` and ``call/branch_<i>/...`` for conditionals.

Wiring, argument by argument: the call op feeds each ``_Arg`` node with the tensor of the
matching call input; each ``_Retval`` node feeds the consumers of the matching call output (the
original ``call -> consumer`` data edges are replaced).  Control edges stay on the call op.
TensorFlow's calls match them in order; a call op with a ``_calls`` attribute (another
format's, ONNX's ``If``, ``Loop``, ``Scan`` and local function calls) says it: a list of
``NameAttrList``, each naming a function with ``scope`` (its sub-scope, empty for the call's
own), ``args`` (the call input feeding each argument, -1 none), ``rets`` (the call output
each result is, -1 none) and, for a loop, ``carry`` (the argument each result becomes in the
next iteration), and the function's ``_scope_labels`` label the scopes of its body.
Recursive functions are cut at the first repeat (the inner call gets ``recursion_cut``), calls
nested deeper than ``max_call_depth`` stay closed (``depth_cut``: a body's op names grow with
its nesting, so opening every level holds names quadratic in it), and a budget of inlined ops
guards against a small function called a million times.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from ..options import LoadOptions
from ..read.dtypes import dtype_name, shape_from_proto
from .graph import CONTROL, InputRef, node_def_of, parse_input, tensor_of
from .handles import handle_of_attrs
from .shapes import TensorInfo

if TYPE_CHECKING:
    from .builder import ModelBuilder
    from .graph import GraphModel

__all__ = ["call_targets", "call_wiring", "calling_ops", "inline_calls", "inline_library",
           "wired_ops"]

_PLAIN_CALLS = frozenset({"StatefulPartitionedCall", "PartitionedCall", "TPUPartitionedCall"})
_WHILE = frozenset({"While", "StatelessWhile", "_While"})
_IF = frozenset({"If", "StatelessIf", "_If"})
_CASE = frozenset({"Case", "StatelessCase", "_Case"})
#: Every op type that may run a function by an attribute (a library function's own name, as
#: an op type, runs it too).
_CALL_OPS = _PLAIN_CALLS | _WHILE | _IF | _CASE
#: The attribute of a call op that says what it runs and how it is wired (module docstring).
_WIRED = "_calls"

#: Output-arg names of common ops with several single-tensor outputs, to map ``x:arg:i`` (the
#: function-body input syntax) to a flat output index without TensorFlow's op registry.
_OUTPUT_ARGS: dict[str, tuple[str, ...]] = {
    "FusedBatchNorm": ("y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"),
    "FusedBatchNormV2": ("y", "batch_mean", "batch_variance", "reserve_space_1",
                         "reserve_space_2"),
    "FusedBatchNormV3": ("y", "batch_mean", "batch_variance", "reserve_space_1",
                         "reserve_space_2", "reserve_space_3"),
    "FusedBatchNormGradV3": ("x_backprop", "scale_backprop", "offset_backprop",
                             "reserve_space_4", "reserve_space_5"),
    "Unique": ("y", "idx"),
    "UniqueV2": ("y", "idx"),
    "TopKV2": ("values", "indices"),
    "Switch": ("output_false", "output_true"),
    "Merge": ("output", "value_index"),
    "Svd": ("s", "u", "v"),
    "Qr": ("q", "r"),
    "BroadcastGradientArgs": ("r0", "r1"),
    "MaxPoolWithArgmax": ("output", "argmax"),
    "SoftmaxCrossEntropyWithLogits": ("loss", "backprop"),
    "SparseSoftmaxCrossEntropyWithLogits": ("loss", "backprop"),
}


def call_targets(node_def: Any, library: dict[str, Any]) -> tuple[list[tuple[str, str]], int]:
    """The functions a call op runs, as ``(sub-scope, function name)``, and how many leading
    call inputs are not function arguments (the predicate of ``If``, the index of ``Case``;
    none where ``_calls`` says which input feeds which argument)."""
    attr = node_def.attr
    if _WIRED in attr:
        return [(f.attr["scope"].s.decode("utf-8", "replace"), f.name)
                for f in attr[_WIRED].list.func], 0
    op = node_def.op
    if op not in _CALL_OPS:  # most ops: their attributes are not read (costly in protobuf)
        return ([("", op)], 0) if op in library else ([], 0)
    if op in _PLAIN_CALLS and "f" in attr:
        return [("", attr["f"].func.name)], 0
    if op in _WHILE and "body" in attr:
        return [("cond", attr["cond"].func.name), ("body", attr["body"].func.name)], 0
    if op in _IF and "then_branch" in attr:
        return [("then", attr["then_branch"].func.name),
                ("else", attr["else_branch"].func.name)], 1
    if op in _CASE and "branches" in attr:
        return [(f"branch_{i}", f.name) for i, f in enumerate(attr["branches"].list.func)], 1
    return ([("", op)], 0) if op in library else ([], 0)


def _cond_last(target: tuple[str, str]) -> bool:
    """Sort key of a ``(sub-scope, function)`` call target: a ``While``'s condition last."""
    return target[0] == "cond"


def calling_ops(library: dict[str, Any], wired: frozenset[str] = frozenset()
                ) -> frozenset[str]:
    """The op types that may run a function: a filter on ``op`` that spares reading the other
    ops' attributes, or even calling :func:`call_targets`, once per op of a 65,000-op graph.
    ``wired`` are the op types the model says run functions by ``_calls``."""
    return _CALL_OPS | frozenset(library) | wired


def wired_ops(bodies: list[Any], library: dict[str, Any]) -> frozenset[str]:
    """The op types in ``bodies`` (lists of NodeDefs) that run functions by ``_calls`` (an
    ONNX ``Loop`` or ``Scan``, whose type names no function).  Read only when some function
    is the body of an op (its ``_call`` attribute), so a TensorFlow graph's ops are never
    read for it."""
    if not any("_call" in f.attr for f in library.values()):
        return frozenset()
    return frozenset(n.op for nodes in bodies for n in nodes if _WIRED in n.attr)


def call_wiring(node_def: Any, target: int) -> tuple[list[int], list[int], list[int]] | None:
    """What ``_calls`` says of the call op's ``target``-th function: the call input feeding
    each argument, the call output each result is, the argument each result becomes in a
    loop's next iteration (-1: none); None for a TensorFlow call (wired in order)."""
    if _WIRED not in node_def.attr:
        return None
    entry = node_def.attr[_WIRED].list.func[target].attr
    return list(entry["args"].list.i), list(entry["rets"].list.i), list(entry["carry"].list.i)


def _arg_info(fdef: Any, index: int, arg: Any) -> TensorInfo:
    """Dtype and shape of a function argument, from its signature and ``_output_shapes``."""
    shape, known = None, False
    arg_attr = fdef.arg_attr.get(index) if fdef.arg_attr else None
    if arg_attr is not None and "_output_shapes" in arg_attr.attr:
        shapes = arg_attr.attr["_output_shapes"].list.shape
        if shapes:
            shape, known = shape_from_proto(shapes[0]), True
    elif "_input_shapes" in fdef.attr:
        shapes = fdef.attr["_input_shapes"].list.shape
        if index < len(shapes):
            shape, known = shape_from_proto(shapes[index]), True
    dtype = dtype_name(arg.type) if arg.type else None
    return TensorInfo(dtype=dtype, shape=shape, known_shape=known)


class _Body:
    """One instantiation of a FunctionDef under a name prefix."""

    def __init__(self, model: GraphModel, builder: ModelBuilder, fdef: Any, prefix: str,
                 calling: frozenset[str]) -> None:
        self.model, self.builder, self.fdef, self.prefix = model, builder, fdef, prefix
        self.calling = calling  # see calling_ops
        self.local: dict[str, str] = {}
        self.args: dict[str, str] = {}
        self.arg_nodes: list[str] = []
        self.ret_nodes: list[str] = []
        self.calls: list[str] = []
        #: Output-arg names by op type, for ``node:out:i`` inputs (see :meth:`_flat_index`).
        self.output_args: dict[str, tuple[str, ...]] = {}

    def _unique(self, name: str, taken: set[str]) -> str:
        full = self.prefix + name
        while name in taken or full in self.model.g:
            name += "_"
            full = self.prefix + name
        taken.add(name)
        return full

    def build(self) -> None:
        fdef, builder, fname = self.fdef, self.builder, self.fdef.signature.name
        taken = {nd.name for nd in fdef.node_def}
        for i, arg in enumerate(fdef.signature.input_arg):
            full = self._unique(arg.name, taken)
            arg_attr = fdef.arg_attr.get(i) if fdef.arg_attr else None
            handle = handle_of_attrs(arg_attr.attr) if arg_attr is not None else None
            builder.add_node(full, None, op="_Arg", role="arg", function=fname,
                             outputs=[_arg_info(fdef, i, arg)], arg_index=i,
                             **({"handle": handle} if handle is not None else {}))
            self.args[arg.name] = full
            self.arg_nodes.append(full)
        for nd in fdef.node_def:
            self.local[nd.name] = builder.add_node(self.prefix + nd.name, nd, function=fname)
        for nd in fdef.node_def:
            dst = self.local[nd.name]
            for slot, text in enumerate(nd.input):
                self._wire(text, dst, slot)
        rets = fdef.ret
        for j, out in enumerate(fdef.signature.output_arg):
            full = self._unique(out.name, taken)
            dtype = dtype_name(out.type) if out.type else None
            builder.add_node(full, None, op="_Retval", role="retval", function=fname,
                             outputs=[TensorInfo(dtype=dtype)], ret_index=j)
            self.ret_nodes.append(full)
            if out.name in rets:
                self._wire(rets[out.name], full, 0)
        library, calling = self.model.functions, self.calling
        self.calls = [self.local[nd.name] for nd in fdef.node_def
                      if nd.op in calling and call_targets(nd, library)[0]]

    def _resolve(self, ref: InputRef) -> tuple[str, int] | None:
        if ref.node in self.args and ref.arg is None:
            return self.args[ref.node], ref.index
        full = self.local.get(ref.node)
        if full is None:
            return None
        index = ref.index
        if ref.arg is not None:
            index = self._flat_index(full, ref.arg, ref.index)
        return full, index

    def _flat_index(self, full: str, arg: str, index: int) -> int:
        op = self.builder.node[full]["op"]
        names = self.output_args.get(op)
        if names is None:
            callee = self.model.functions.get(op)
            names = self.output_args[op] = (
                tuple(a.name for a in callee.signature.output_arg) if callee is not None
                else _OUTPUT_ARGS.get(op, ()))
        return names.index(arg) + index if arg in names else index

    def _wire(self, text: str, dst: str, slot: int) -> None:
        parts = text.split(":")
        if len(parts) == 3 and text[0] != "^" and parts[2].isascii() and parts[2].isdigit():
            # The common case, ``node:out:0``, without building an InputRef (once per edge).
            full = self.local.get(parts[0])
            if full is not None:
                self.builder.edge(full, dst, slot, False,
                                  self._flat_index(full, parts[1], int(parts[2])))
                return
        elif len(parts) == 1 and text in self.args:
            self.builder.edge(self.args[text], dst, slot, False, 0)
            return
        ref = parse_input(text)
        if ref.error:
            self.builder.warn.add("malformed inputs", f"op {dst!r}: input {text!r}: {ref.error}")
            if not ref.node:
                return
        resolved = self._resolve(ref)
        if resolved is None:
            missing = self.prefix + ref.node
            self.builder.ensure_missing(missing, dst)
            resolved = (missing, ref.index)
        self.builder.edge(resolved[0], dst, slot, ref.control, resolved[1])


def _call_io(model: GraphModel, call: str) -> tuple[dict[int, tuple[str, int]], dict[int, list]]:
    """The tensors a call consumes (by data input slot) and its consumers per output."""
    g = model.g
    ins = {d["dst_input"]: tensor_of(u, d) for u, _, d in g.in_edges(call, data=True)
           if d["kind"] != CONTROL}
    outs: dict[int, list[tuple[str, int, dict[str, Any]]]] = {}
    for _, v, k, d in g.out_edges(call, keys=True, data=True):
        if d["kind"] != CONTROL:
            outs.setdefault(d["src_output"], []).append((v, k, d))
    return ins, outs


class _Inliner:
    """Breadth-first opening of calls, with a recursion guard and an op budget."""

    def __init__(self, model: GraphModel, builder: ModelBuilder, options: LoadOptions) -> None:
        self.model, self.builder, self.options = model, builder, options
        self.budget = options.max_function_ops
        self.exhausted = False
        self.queue: deque[tuple[str, tuple[str, ...]]] = deque()
        self.calling = calling_ops(model.functions, model.call_ops)
        #: Each opened call's body ops, in the order they were added (see :meth:`order`).
        self.bodies: dict[str, list[str]] = {}
        model.function_groups = {}

    def instantiate(self, fname: str, prefix: str) -> _Body | None:
        fdef = self.model.functions[fname]
        if len(fdef.node_def) > self.budget:
            if not self.exhausted:
                self.model.warnings.add(
                    "function budget",
                    f"stopped opening function bodies after {self.options.max_function_ops:,} "
                    "ops; the remaining calls are drawn closed",
                )
            self.exhausted = True
            return None
        self.budget -= len(fdef.node_def)
        body = _Body(self.model, self.builder, fdef, prefix, self.calling)
        body.build()
        self.model.function_groups[prefix.rstrip("/")] = fname
        if "_scope_labels" in fdef.attr:
            labels = self.model.scope_labels
            for scope, label in fdef.attr["_scope_labels"].func.attr.items():
                labels[prefix + scope] = label.s.decode("utf-8", "replace")
        return body

    def open_call(self, call: str, stack: tuple[str, ...]) -> None:
        g, model = self.model.g, self.model
        node_def = node_def_of(g.nodes[call])
        targets, offset = call_targets(node_def, model.functions)
        # A loop's body first: it is what the loop repeats, and a caption cut after one name
        # should not show only the condition (the bodies still open in TensorFlow's order).
        g.nodes[call]["calls"] = [fname for _, fname in sorted(targets, key=_cond_last)]
        if len(stack) >= self.options.max_call_depth:
            g.nodes[call]["depth_cut"] = True
            model.warnings.add(
                "call depth",
                f"op {call!r} is a call nested more than {self.options.max_call_depth} deep; "
                "drawn closed")
            return
        ins, outs = _call_io(model, call)  # read only for a call that opens
        wired: set[int] = set()
        for t, (sub, fname) in enumerate(targets):
            if fname not in model.functions:
                model.warnings.add("unknown functions",
                                   f"op {call!r} calls {fname!r}, which the library lacks")
                continue
            if fname in stack:
                g.nodes[call]["recursion_cut"] = True
                model.warnings.add("recursion", f"op {call!r} calls {fname!r} recursively; cut")
                continue
            body = self.instantiate(fname, f"{call}/{sub}/" if sub else f"{call}/")
            if body is None:
                return
            self.bodies.setdefault(call, []).extend(
                [*body.arg_nodes, *body.local.values(), *body.ret_nodes])
            said = call_wiring(node_def, t)
            args, rets = (said[0], said[1]) if said is not None else (
                [offset + i for i in range(len(body.arg_nodes))],
                [] if sub == "cond" else list(range(len(body.ret_nodes))))
            for arg, slot in zip(body.arg_nodes, args, strict=False):
                if slot in ins:
                    g.add_edge(call, arg, key=0, kind="data", src_output=slot, dst_input=0,
                               tensor=ins[slot], back=False)
            wired |= self._wire_outputs(call, body, outs, rets)
            self.queue.extend((inner, (*stack, fname)) for inner in body.calls)
        g.remove_edges_from([(call, v, k) for j in wired for v, k, _ in outs[j]])

    def _wire_outputs(self, call: str, body: _Body, outs: dict[int, list],
                      rets: list[int]) -> set[int]:
        """Each result feeds the consumers of the call output it is; returns those outputs
        (their edges from the call op itself are then dropped)."""
        g = self.model.g
        wired = set()
        for ret, j in zip(body.ret_nodes, rets, strict=False):
            for v, k, d in outs.get(j, ()):
                g.add_edge(ret, v, key=k, **{**d, "tensor": (call, j)})
                wired.add(j)
        return wired

    def run(self) -> None:
        while self.queue and not self.exhausted:
            call, stack = self.queue.popleft()
            self.open_call(call, stack)

    def order(self, names: list[str]) -> list[str]:
        """The ops ``names`` with each opened call's body right after the call (bodies within
        bodies likewise): an order in which nearly every edge points forward, where the
        model's own (bodies added after every top-level op) has each body's outputs point
        back to their consumers.  Ops added for missing inputs are left out."""
        bodies = self.bodies
        out: list[str] = []
        stack = [iter(names)]
        while stack:
            for n in stack[-1]:
                out.append(n)
                inner = bodies.get(n)
                if inner:
                    stack.append(iter(inner))
                    break
            else:
                stack.pop()
        return out


def inline_calls(model: GraphModel, builder: ModelBuilder, names: list[str],
                 options: LoadOptions) -> list[str]:
    """Open every call among the top-level ops ``names`` (and, transitively, inside bodies).
    Returns the ops in an order where nearly every edge points forward (see
    :meth:`_Inliner.order`)."""
    inliner = _Inliner(model, builder, options)
    nodes, library = model.g.node_data, model.functions  # the node dicts: a loop over all ops
    calling = inliner.calling
    for n in names:
        data = nodes[n]
        if data["op"] in calling and call_targets(node_def_of(data), library)[0]:
            inliner.queue.append((n, ()))
    inliner.run()
    return inliner.order(names)


def inline_library(model: GraphModel, builder: ModelBuilder, options: LoadOptions) -> None:
    """A GraphDef with only a function library: draw each function as a top-level group."""
    inliner = _Inliner(model, builder, options)
    for fname in sorted(model.functions):
        body = inliner.instantiate(fname, f"{fname}/")
        if body is None:
            break
        inliner.queue.extend((inner, (fname,)) for inner in body.calls)
    inliner.run()


