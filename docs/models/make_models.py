"""The models the ONNX page of the docs draws: torchvision's ResNet-18 as PyTorch users hand it
on, exported to ONNX and written by ``SummaryWriter.add_graph``, so the page can show one
model through both routes side by side.

* ``resnet18.onnx``: ``torch.onnx.export``'s default (dynamo) exporter, which keeps each node's
  module path in its metadata and writes the weights to ``resnet18.onnx.data``.  That file is
  deleted: a picture never needs the weights, and the page says so.
* ``resnet18_add_graph/``: a logdir holding ``add_graph``'s trace of the same model.

Random weights, a 64×64 image (the same input for both, so their edges carry the same shapes).
Run with the test extras installed (``.venv/bin/python docs/models/make_models.py``); the
outputs are committed, so building the docs needs no PyTorch.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import warnings
from pathlib import Path

import torch
import torchvision
from torch.utils.tensorboard import SummaryWriter

HERE = Path(__file__).resolve().parent


def main() -> None:
    torch.manual_seed(0)
    model = torchvision.models.resnet18().eval()
    example = (torch.zeros(1, 3, 64, 64),)
    onnx_path = HERE / "resnet18.onnx"
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        torch.onnx.export(model, example, str(onnx_path))
    onnx_path.with_name(onnx_path.name + ".data").unlink(missing_ok=True)
    logdir = HERE / "resnet18_add_graph"
    shutil.rmtree(logdir, ignore_errors=True)
    with SummaryWriter(str(logdir)) as writer:
        writer.add_graph(model, example)
    for event in logdir.glob("events.out.tfevents.*"):  # a fixed name, so a rerun replaces it
        event.rename(logdir / "events.out.tfevents.0000000000.docs.0")
    for path in sorted(HERE.rglob("*")):
        if path.is_file() and path.suffix != ".py":
            print(f"{path.relative_to(HERE)}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
