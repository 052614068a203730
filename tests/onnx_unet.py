"""A U-Net and the same U-Net with one stage wider, as ONNX files to diff: the change a pull
request makes when it widens one stage of a model (``torch_models.UNet``; its second level
down, ``down.1``, computes with 48 channels instead of 32 between its two convolutions, and
hands on 32 as before).  Both of ``torch.onnx.export``'s exporters: the TorchScript one
(``dynamo=False``) and the dynamo one (the default).  Random weights, CPU, a 32×32 image.

Run as a script (``python tests/onnx_unet.py OUT``) it writes
``OUT/unet_<ts|dynamo>.onnx`` and ``OUT/unet_wider_<ts|dynamo>.onnx``, so the tests never
import PyTorch in the process that reads the files.
"""

from __future__ import annotations

import contextlib
import io
import sys
import warnings
from pathlib import Path

import torch
from torch import nn
from torch_models import UNet

#: The stage made wider, and its width between its convolutions before and after.
STAGE, WIDTH, WIDER = 1, 32, 48


def unet(wider: bool) -> nn.Module:
    torch.manual_seed(0)
    model = UNet()
    if wider:
        block = model.down[STAGE]
        cin = block.conv1.in_channels
        block.conv1 = nn.Conv2d(cin, WIDER, 3, padding=1)
        block.bn1 = nn.BatchNorm2d(WIDER)
        block.conv2 = nn.Conv2d(WIDER, WIDTH, 3, padding=1)
    return model.eval()


def main(out: Path) -> None:
    warnings.filterwarnings("ignore")
    for dynamo in (False, True):
        for name in ("unet", "unet_wider"):
            path = out / f"{name}_{'dynamo' if dynamo else 'ts'}.onnx"
            with contextlib.redirect_stdout(io.StringIO()):  # the exporter's progress lines
                torch.onnx.export(unet(name == "unet_wider"), (torch.zeros(1, 3, 32, 32),),
                                  str(path), dynamo=dynamo)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
