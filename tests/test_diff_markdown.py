"""``tbgraph diff`` of ONNX files: a U-Net against the same U-Net with one stage wider, as
PyTorch's two exporters write them (``onnx_unet.py``, in its own process).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import write_with

import graphviz_tb


@pytest.fixture(scope="session")
def unet_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The U-Net and its wider twin, with both exporters (PyTorch, in its own process)."""
    if not os.environ.get("CI"):
        for module in ("torch", "onnxscript", "onnx"):
            pytest.importorskip(module)
    return write_with("onnx_unet.py", tmp_path_factory.mktemp("unet"), "the U-Net files")


@pytest.mark.torch
def test_the_merged_model_keeps_the_module_labels(unet_dir: Path) -> None:
    """The diff's picture names each PyTorch module as the model's own picture does
    (``down.1.conv1``, ``pool (call 2)``), not by the last part of its path."""
    d = graphviz_tb.diff(*(unet_dir / f"{name}_ts.onnx" for name in ("unet", "unet_wider")))
    labels = d.new.model.scope_labels
    assert labels["down.1/conv1"] == "down.1.conv1"
    h = d.graph.hierarchy(graphviz_tb.RenderOptions(color_by="diff"))
    shown = {name: h.groups[name].label for name in labels if name in h.groups}
    assert shown == {name: labels[name] for name in shown} and len(shown) == len(labels)
