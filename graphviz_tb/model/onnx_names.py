"""How the ops of one ONNX graph (the model's, a body's, a local function's) are named: by
their module, as the code names it (see :mod:`.onnx`).  One :class:`ModuleNames` per graph:
a body's scopes are its own (``step/fc`` inside a loop's body), labelled apart.

The scope comes from the first of: the dynamo exporter's module metadata
(``pkg.torch.onnx.name_scopes``, with ``class_hierarchy`` for each module's class), node names
with ``/`` (the TorchScript exporter's ``/layer1/layer1.0/conv1/Conv``; any other exporter's
scopes are taken as written; TorchScript names a module's second call ``relu_1``, labelled
``layer1.0.relu (call 2)``; the dynamo exporter's calls of one leaf module are split
likewise), else none.  Both PyTorch exporters give one module the same scope
(``layer1/0/conv1``), labelled as the code names it (``layer1.0.conv1 (Conv2d)``; the class
only where the file says it).  An op is named after its type within its module
(``layer1/0/conv1/Conv``).  No name holds ``:``, which would read as an output index
(``∶``, the ratio sign, stands for it).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["INPUT", "OUTPUT", "ModuleNames", "node_name", "safe_name"]

INPUT, OUTPUT = "onnx::Input", "onnx::Output"
_NUMBERED_OUTPUT = "output"
_CALL = re.compile(r"(.+)_(\d+)")


def node_name(node: Any) -> str:
    """The ONNX name the reader kept for a NodeDef."""
    return node.attr["_name"].s.decode("utf-8", "replace")


def safe_name(name: str) -> str:
    """A name that reads as one op's, never as an output index or a scope (``/`` and ``:``
    replaced; TorchScript's leading ``/`` dropped: ``/Mul_output_0`` is ``Mul_output_0``)."""
    return name.lstrip("/").replace("/", "_").replace(":", "∶")


class ModuleNames:
    """The scopes and names of one graph's ops, and each scope's label."""

    def __init__(self) -> None:
        #: Module scope -> the label a picture gives it (``layer1.0.conv1 (Conv2d)``).
        self.labels: dict[str, str] = {}
        self.recorded: set[str] = set()  # scopes from the dynamo exporter's metadata

    def scope(self, node: Any) -> str:
        """The node's module scope (``layer1/0/conv1``), its modules labelled on the way."""
        if node.op in (INPUT, OUTPUT):
            return ""
        scopes = [s.decode("utf-8", "replace") for s in node.attr["_scopes"].list.s] \
            if "_scopes" in node.attr else []
        if len(scopes) >= 2:
            classes = [c.decode("utf-8", "replace") for c in node.attr["_classes"].list.s] \
                if "_classes" in node.attr else []
            if len(classes) != len(scopes):
                classes = []
            scope = self._modules(scopes[1:-1], [c.rpartition(".")[2] for c in classes[1:-1]])
            self.recorded.add(scope)
            return scope
        name = node_name(node)
        if name.startswith("/"):  # TorchScript: /layer1/layer1.0/conv1/Conv
            return self._modules([p for p in name.split("/")[1:-1] if p], [])
        return name.rpartition("/")[0].replace(":", "∶")  # another exporter's, as written

    def split_calls(self, drawn: list[Any], scopes: list[str]) -> list[str]:
        """A leaf module the dynamo exporter's metadata says was called more than once
        (ResNet's ``relu``) split into one scope per call, as TorchScript names them
        (``relu``, ``relu_1``): one scope for both would be a box that the data leaves and
        comes back into.  A call is a connected part of the module's ops."""
        position = {node.name: i for i, node in enumerate(drawn)}
        members: dict[str, list[int]] = {}
        for i, scope in enumerate(scopes):
            if scope in self.recorded:
                members.setdefault(scope, []).append(i)
        parents = {s.rpartition("/")[0] for s in set(scopes)}
        for scope, ops in members.items():
            if len(ops) < 2 or scope in parents:
                continue
            root = {i: i for i in ops}
            for i in ops:
                for text in drawn[i].input:
                    j = position.get(text.partition(":")[0])
                    if j in root:
                        root[_find(root, i)] = _find(root, j)
            calls = list(dict.fromkeys(_find(root, i) for i in ops))
            label = self.labels.get(scope, scope)
            for n, call in enumerate(calls[1:], start=2):
                name, k = f"{scope}_{n - 1}", n
                while name in self.labels:
                    name, k = f"{scope}_{k}", k + 1
                self.labels[name] = f"{label[:-1]}, call {n})" if label.endswith(")") \
                    else f"{label} (call {n})"
                for i in ops:
                    if _find(root, i) == call:
                        scopes[i] = name
        return scopes

    def _modules(self, paths: list[str], classes: list[str]) -> str:
        """Module paths as scope components relative to their parent (``layer1.0`` under
        ``layer1`` is ``0``), each scope labelled with its dotted path and class.  The dynamo
        exporter writes full paths (``layer1.0.conv1``); TorchScript a module's name in its
        parent, but a container's members by the container's name (``downsample.0``)."""
        dotted, parts = "", list[str]()
        for i, path in enumerate(paths):
            if dotted and path.startswith(dotted + "."):
                part = path[len(dotted) + 1:]
            elif parts and path.startswith(parts[-1] + "."):
                part = path[len(parts[-1]) + 1:]
            else:
                part = path
            kind = classes[i] if i < len(classes) else ""
            called = _CALL.fullmatch(part)
            prefix = "/".join(parts)
            if not classes and called and f"{prefix}/{called.group(1)}".lstrip("/") \
                    in self.labels:  # TorchScript's name for a module's next call: relu_1
                dotted = f"{dotted}.{called.group(1)}" if dotted else called.group(1)
                kind = f"call {int(called.group(2)) + 1}"
            else:
                dotted = f"{dotted}.{part}" if dotted else part
            parts.append(part.replace("/", "∕").replace(":", "∶"))
            scope = "/".join(parts)
            if scope not in self.labels or (kind and "(" not in self.labels[scope]):
                self.labels[scope] = f"{dotted} ({kind})" if kind else dotted
        return "/".join(parts)

    @staticmethod
    def base(node: Any, scope: str) -> str:
        """The name an op would take before it is made unique: its type within its module;
        an input's or output's own name."""
        if node.op in (INPUT, OUTPUT):
            name = safe_name(node_name(node)) or node.op.partition("::")[2].lower()
            return _NUMBERED_OUTPUT if node.op == OUTPUT and name.isdigit() else name
        short = node.op.rpartition("::")[2].replace(":", "∶")
        return f"{scope}/{short}" if scope else short


def _find(root: dict[int, int], i: int) -> int:
    """The representative of ``i``'s part (union-find, paths halved)."""
    while root[i] != i:
        root[i] = root[root[i]]
        i = root[i]
    return i
