"""Compose a very large GraphDef (~200k ops) from copies of real ones, for scale benchmarks.

No real model reaches 200k ops, so this stitches whole copies of real graphs side by side.
Copy K of a graph has every node renamed ``copy_K/<name>``, with its data inputs, control
inputs (``^name``) and colocation attributes (``_class: loc:@name``) rewritten to match, so
each copy stays a valid, self-contained subgraph.  Function libraries are merged (same-named
functions must be identical).  Needs only protobuf and the GraphDef proto (TensorBoard's copy
of it: no TensorFlow).

Library use::

    from graphs_synthetic import compose
    big = compose([graph_a, graph_b], target=200_000)

Command line (from the repository root)::

    .venv/bin/python bench/graphs_synthetic.py --out bench/graphs/synthetic_200k.pb \\
        bench/graphs/resnet50_train.pb bench/graphs/bert_train.pb
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from tensorboard.compat.proto import graph_pb2, node_def_pb2

LOC_PREFIX = b"loc:@"


def load_graph_def(path: Path) -> graph_pb2.GraphDef:
    """Read a binary GraphDef."""
    return graph_pb2.GraphDef.FromString(Path(path).read_bytes())


def _rename_input(raw: str, prefix: str) -> str:
    """Prefix the node part of an input, keeping a leading ^ and any :port suffix."""
    if raw.startswith("^"):
        return "^" + prefix + raw[1:]
    return prefix + raw


def prefixed_nodes(graph_def: graph_pb2.GraphDef, prefix: str) -> Iterable[node_def_pb2.NodeDef]:
    """Copies of the graph's nodes with names, inputs and colocations moved under prefix."""
    for node in graph_def.node:
        copy = node_def_pb2.NodeDef()
        copy.CopyFrom(node)
        copy.name = prefix + node.name
        del copy.input[:]
        copy.input.extend(_rename_input(raw, prefix) for raw in node.input)
        if "_class" in copy.attr:
            values = copy.attr["_class"].list.s
            renamed = [
                LOC_PREFIX + prefix.encode() + v[len(LOC_PREFIX) :]
                if v.startswith(LOC_PREFIX)
                else v
                for v in values
            ]
            del values[:]
            values.extend(renamed)
        yield copy


def _merge_library(
    target: graph_pb2.GraphDef, source: graph_pb2.GraphDef, seen: dict[str, bytes]
) -> None:
    """Add the source's functions once; a same-named but different function is an error."""
    for function in source.library.function:
        name = function.signature.name
        data = function.SerializeToString(deterministic=True)
        if name in seen:
            if seen[name] != data:
                raise ValueError(f"two different library functions are named {name!r}")
            continue
        seen[name] = data
        target.library.function.add().CopyFrom(function)
    known = {g.function_name for g in target.library.gradient}
    for gradient in source.library.gradient:
        if gradient.function_name not in known:
            target.library.gradient.add().CopyFrom(gradient)
            known.add(gradient.function_name)


def compose(sources: Sequence[graph_pb2.GraphDef], target: int = 200_000) -> graph_pb2.GraphDef:
    """Add whole copies of the sources, cycling through them, until target nodes are reached.

    The result has at least ``target`` nodes and overshoots by less than one source graph.
    """
    if not sources or not any(len(s.node) for s in sources):
        raise ValueError("need at least one non-empty source GraphDef")
    result = graph_pb2.GraphDef()
    result.versions.CopyFrom(sources[0].versions)
    seen: dict[str, bytes] = {}
    for copy_index, source in enumerate(itertools.cycle(sources)):
        if len(result.node) >= target:
            break
        result.node.extend(prefixed_nodes(source, f"copy_{copy_index}/"))
        _merge_library(result, source, seen)
    return result


def compose_to_file(paths: Sequence[Path], out: Path, target: int = 200_000) -> graph_pb2.GraphDef:
    """Load the source files, compose them and write the result as a binary GraphDef."""
    composed = compose([load_graph_def(p) for p in paths], target)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(composed.SerializeToString(deterministic=True))
    return composed


def main(argv: list[str] | None = None) -> int:
    """Command line entry: compose the given .pb files into one big GraphDef."""
    parser = argparse.ArgumentParser(description="Compose a large GraphDef from copies.")
    parser.add_argument("sources", nargs="+", type=Path, help="binary GraphDef files")
    parser.add_argument("--out", type=Path, required=True, help="where to write the result")
    parser.add_argument("--target", type=int, default=200_000, help="minimum node count")
    args = parser.parse_args(argv)
    composed = compose_to_file(args.sources, args.out, args.target)
    print(
        f"{args.out}: {len(composed.node):,} nodes, "
        f"{len(composed.library.function)} functions, {composed.ByteSize() / 1e6:.1f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
