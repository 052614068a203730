"""ONNX files as PyTorch users write them, with both of ``torch.onnx.export``'s exporters: the
TorchScript one (``dynamo=False``) and the dynamo one (the default, which writes weights to
an external ``.data`` file).  Random weights, CPU, small inputs.

* ``resnet18`` and ``resnet50``: torchvision's ResNets on a 64×64 image;
* ``vit_b_16``: torchvision's ViT-B/16, all twelve encoder layers, on a 32×32 image (four
  patches: the model, only fewer patches);
* ``mobilenet_v3``: torchvision's MobileNetV3 (Large) on a 64×64 image;
* ``text``: the ``TransformerEncoder`` text classifier of ``torch_models.py``;
* ``seq2seq``: its LSTM encoder–decoder;
* ``unet``: its U-Net, whose levels down and up are ``ModuleList``\\ s;
* ``branchy``: a scripted model with a ``Loop`` and an ``If`` (TorchScript exporter only:
  the dynamo exporter does not take scripted modules);
* ``cond``: ``torch.cond`` (dynamo exporter only), an ``If`` with two branches;
* ``nested``: a scripted model whose ``Loop`` calls a module and whose ``If`` holds a
  ``Loop`` of its own (TorchScript exporter);
* ``functions``: one module class called twice, exported as a local function
  (``export_modules_as_functions``, TorchScript exporter);
* ``small`` and ``wider``: a small CNN, and the same with its second block wider (to diff).

Run as a script (``python tests/onnx_models.py OUT``) it writes ``OUT/<model>_<ts|dynamo>.onnx``
and ``OUT/models.json`` (each model's modules by dotted path, with their class), so the tests
never import PyTorch in the process that reads the files.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import warnings
from pathlib import Path

import torch
import torchvision
from torch import nn
from torch_models import Seq2Seq, TextClassifier, UNet


class Branchy(nn.Module):
    """A linear layer, then a data-dependent loop and branch (scripted, so they stay)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        for _ in range(int(x.sum().item())):
            y = y * 0.5
        y = torch.relu(y) if bool(y.sum() > 0) else -y
        return y


class Cond(nn.Module):
    """A linear layer whose output takes one of two branches (``torch.cond``)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        return torch.cond(y.sum() > 0, lambda t: torch.relu(t), lambda t: -t, (y,))


class Step(nn.Module):
    """A linear layer and a ReLU: a loop's body, and the function called twice."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


class Nested(nn.Module):
    """A loop calling a module, then a branch holding a loop of its own (scripted)."""

    def __init__(self) -> None:
        super().__init__()
        self.step = Step()
        self.head = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(int(x.sum().item())):
            y = self.step(y)
        if bool(y.sum() > 0):
            for _ in range(int(y.mean().item())):
                y = y * 0.5
            z = self.head(y)
        else:
            z = -y
        return z


class Twice(nn.Module):
    """One module class called twice: with ``export_modules_as_functions``, two calls of one
    local function."""

    def __init__(self) -> None:
        super().__init__()
        self.first = Step()
        self.second = Step()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(self.first(x))


class Block(nn.Module):
    """Two convolutions, ``width`` channels between them."""

    def __init__(self, channels: int, width: int) -> None:
        super().__init__()
        self.expand = nn.Conv2d(channels, width, 3, padding=1)
        self.project = nn.Conv2d(width, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.project(torch.relu(self.expand(x)))


class Small(nn.Module):
    """A stem, two blocks and a head: ``wider`` widens the second block only."""

    def __init__(self, wider: bool = False) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.blocks = nn.Sequential(Block(8, 16), Block(8, 32 if wider else 16))
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.stem(x)).mean(dim=(2, 3)))


def _models() -> list[tuple[str, nn.Module, tuple[torch.Tensor, ...], tuple[bool, ...]]]:
    """(name, model, example inputs, the exporters to use: dynamo or not)."""
    torch.manual_seed(0)
    return [
        ("resnet18", torchvision.models.resnet18(weights=None).eval(),
         (torch.zeros(1, 3, 64, 64),), (False, True)),
        ("resnet50", torchvision.models.resnet50(weights=None).eval(),
         (torch.zeros(1, 3, 64, 64),), (False, True)),
        ("vit_b_16", torchvision.models.vit_b_16(weights=None, image_size=32).eval(),
         (torch.zeros(1, 3, 32, 32),), (False, True)),
        ("mobilenet_v3", torchvision.models.mobilenet_v3_large(weights=None).eval(),
         (torch.zeros(1, 3, 64, 64),), (False, True)),
        ("text", TextClassifier().eval(), (torch.zeros(2, 10, dtype=torch.long),),
         (False, True)),
        ("seq2seq", Seq2Seq().eval(), (torch.zeros(2, 5, dtype=torch.long),
                                       torch.zeros(2, 4, dtype=torch.long)), (False, True)),
        ("unet", UNet().eval(), (torch.zeros(1, 3, 32, 32),), (False, True)),
        ("branchy", torch.jit.script(Branchy()), (torch.ones(3, 8),), (False,)),
        ("cond", Cond().eval(), (torch.ones(3, 8),), (True,)),
        ("nested", torch.jit.script(Nested()), (torch.ones(3, 8),), (False,)),
        ("small", Small().eval(), (torch.zeros(1, 3, 16, 16),), (False,)),
        ("wider", Small(wider=True).eval(), (torch.zeros(1, 3, 16, 16),), (False,)),
    ]


def main(out: Path) -> None:
    warnings.filterwarnings("ignore")
    described = {}
    for name, model, args, exporters in _models():
        modules = {path: type(m).__name__ for path, m in model.named_modules() if path}
        for dynamo in exporters:
            path = out / f"{name}_{'dynamo' if dynamo else 'ts'}.onnx"
            with contextlib.redirect_stdout(io.StringIO()):  # the exporter's progress lines
                torch.onnx.export(model, args, str(path), dynamo=dynamo)
            described[path.stem] = {"modules": modules}
    with contextlib.redirect_stdout(io.StringIO()):
        torch.onnx.export(Twice().eval(), (torch.ones(3, 8),), str(out / "functions_ts.onnx"),
                          dynamo=False, export_modules_as_functions={Step})
    (out / "models.json").write_text(json.dumps(described, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
