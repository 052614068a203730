"""The ONNX bench's models, exported with PyTorch as its users export them.

A text classifier (an embedding, ``LAYERS`` Transformer encoder layers, a linear head),
exported by ``torch.onnx.export``'s TorchScript exporter (``dynamo=False``): it names each node
by its module path (``/enc/layers.7/self_attn/MatMul``), and its node count grows by 88 per
layer (10 layers: 878 nodes; 115: 10,118; 1,150: about 101,000), so one model family gives
every size the ONNX issue names.  The dynamo exporter is left out of the large sizes: it took
80 s for 60 layers here (2,343 nodes) and grows faster than the layers.

Run in a process of its own (``python bench/make_onnx.py OUT LAYERS …``), so the bench never
imports PyTorch; it writes ``OUT/encoder_<LAYERS>.onnx``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import torch
from torch import nn

#: Small widths: the node count is what the bench measures, not the weights' bytes.
WIDTH, HEADS, FFN, VOCAB, TOKENS = 32, 2, 64, 100, 16


class Encoder(nn.Module):
    """Embedding, ``layers`` encoder layers, mean over tokens, a linear head."""

    def __init__(self, layers: int) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, WIDTH)
        layer = nn.TransformerEncoderLayer(WIDTH, HEADS, FFN, batch_first=True, dropout=0.0)
        self.enc = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(WIDTH, 4)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.enc(self.emb(tokens)).mean(1))


def export(layers: int, out: Path) -> Path:
    """Write the ``layers``-layer model to ``out`` and return its path."""
    torch.manual_seed(0)
    path = out / f"encoder_{layers}.onnx"
    model = Encoder(layers).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(model, (torch.zeros(2, TOKENS, dtype=torch.long),), str(path),
                          dynamo=False)
    return path


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for layers in argv[1:]:
        print(export(int(layers), out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
