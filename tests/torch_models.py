"""PyTorch models as users write them, logged with ``SummaryWriter.add_graph``: torchvision's
ResNet-50, ViT-B/16 and MobileNetV3, a ``TransformerEncoder`` text model, an LSTM
encoder-decoder, a U-Net with ``ModuleList``\\ s and skip connections, and random models put
together from the parts users combine.  Random weights, CPU, small inputs.

Run as a script (``python tests/torch_models.py OUT``) it writes one logdir per model under
``OUT`` and a ``models.json`` describing them; the tests run it in a subprocess, so PyTorch is
never imported by the process that reads the graphs (reading one never needs it).
"""

from __future__ import annotations

import itertools
import json
import random
import sys
import warnings
from pathlib import Path

import torch
import torchvision
from torch import nn
from torch.utils.tensorboard import SummaryWriter


class TextClassifier(nn.Module):
    """Token embedding, a six-layer ``TransformerEncoder`` (a ``ModuleList`` it iterates),
    mean pooling and a linear head."""

    def __init__(self, vocab: int = 100, width: int = 32, layers: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        layer = nn.TransformerEncoderLayer(width, 4, 64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(width, 2)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(self.embed(tokens)).mean(dim=1))


class Seq2Seq(nn.Module):
    """An LSTM encoder whose final state starts an LSTM decoder: two inputs, one call of each
    LSTM with three outputs."""

    def __init__(self, vocab: int = 50, width: int = 16) -> None:
        super().__init__()
        self.src_embed = nn.Embedding(vocab, width)
        self.tgt_embed = nn.Embedding(vocab, width)
        self.encoder = nn.LSTM(width, width, num_layers=2, batch_first=True)
        self.decoder = nn.LSTM(width, width, num_layers=2, batch_first=True)
        self.out = nn.Linear(width, vocab)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        _, state = self.encoder(self.src_embed(src))
        decoded, _ = self.decoder(self.tgt_embed(tgt), state)
        return self.out(decoded)


class ConvBlock(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))


class Up(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cout, 2, stride=2)
        self.block = ConvBlock(2 * cout, cout)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        return self.block(torch.cat([self.up(x), skip], dim=1))


class UNet(nn.Module):
    """Four levels down and up, each a ``ModuleList`` iterated in ``forward``, joined by skip
    connections (``torch.cat``)."""

    def __init__(self, widths: tuple[int, ...] = (8, 16, 32, 64, 128)) -> None:
        super().__init__()
        self.stem = ConvBlock(3, widths[0])
        self.down = nn.ModuleList(ConvBlock(a, b) for a, b in itertools.pairwise(widths))
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ModuleList(Up(a, b) for a, b in itertools.pairwise(widths[::-1]))
        self.head = nn.Conv2d(widths[0], 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        skips = []
        for block in self.down:
            skips.append(x)
            x = block(self.pool(x))
        for up, skip in zip(self.up, reversed(skips), strict=True):
            x = up(x, skip)
        return self.head(x)


# ---------------------------------------------------------------- random models


class Residual(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width),
                                  nn.ReLU(), nn.Conv2d(width, width, 3, padding=1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x + self.body(x))


class Looped(nn.Module):
    """A ``ModuleList`` iterated in ``forward``, each output kept for a final concatenation."""

    def __init__(self, width: int, count: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(nn.Conv2d(width, width, 1) for _ in range(count))
        self.merge = nn.Conv2d(width * count, width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = []
        for layer in self.layers:
            x = torch.relu(layer(x))
            outs.append(x)
        return self.merge(torch.cat(outs, dim=1))


class Split(nn.Module):
    """``torch.chunk``: one call with several outputs, taken apart by a list unpack."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.gate = nn.Conv2d(width, 2 * width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = torch.chunk(self.gate(x), 2, dim=1)
        return a * torch.sigmoid(b)


class Attend(nn.Module):
    """Self-attention over the pixels of a feature map, with its residual."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(width, 2, batch_first=True)
        self.norm = nn.LayerNorm(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        seq = x.flatten(2).transpose(1, 2)
        out, _ = self.attn(seq, seq, seq)
        return self.norm(seq + out).transpose(1, 2).reshape(n, c, h, w)


PARTS = ("residual", "looped", "split", "attend", "stage")


def _part(kind: str, width: int, rng: random.Random) -> nn.Module:
    if kind == "residual":
        return Residual(width)
    if kind == "looped":
        return Looped(width, rng.randint(2, 4))
    if kind == "split":
        return Split(width)
    if kind == "attend":
        return Attend(width)
    return nn.Sequential(*(Residual(width) for _ in range(rng.randint(2, 4))))


class RandomNet(nn.Module):
    """A stem, a random chain of parts (some repeated), pooling and a head."""

    def __init__(self, seed: int) -> None:
        super().__init__()
        rng = random.Random(seed)
        width = rng.choice((8, 16))
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width),
                                  nn.ReLU())
        kinds = [rng.choice(PARTS) for _ in range(rng.randint(3, 6))]
        self.blocks = nn.Sequential(*(_part(k, width, rng) for k in kinds))
        self.head = nn.Linear(width, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(self.blocks(
            self.stem(x)), 1), 1))


# ---------------------------------------------------------------- writing the logdirs

RANDOM_SEEDS = (1, 2, 3)


def models() -> dict[str, tuple[nn.Module, tuple[torch.Tensor, ...]]]:
    """Every model with its example inputs (the names the tests use)."""
    torch.manual_seed(0)
    tokens = torch.zeros(2, 7, dtype=torch.long)
    found: dict[str, tuple[nn.Module, tuple[torch.Tensor, ...]]] = {
        "resnet50": (torchvision.models.resnet50(), (torch.zeros(1, 3, 64, 64),)),
        # torchvision's ViT-B/16 at 32x32 (4 patches): the model, only fewer patches.
        "vit_b_16": (torchvision.models.vit_b_16(image_size=32), (torch.zeros(1, 3, 32, 32),)),
        "mobilenet_v3": (torchvision.models.mobilenet_v3_small(), (torch.zeros(1, 3, 64, 64),)),
        "text_transformer": (TextClassifier(), (tokens,)),
        "lstm_seq2seq": (Seq2Seq(), (torch.zeros(2, 5, dtype=torch.long),
                                     torch.zeros(2, 4, dtype=torch.long))),
        "unet": (UNet(), (torch.zeros(1, 3, 32, 32),)),
    }
    for seed in RANDOM_SEEDS:
        found[f"random_{seed}"] = (RandomNet(seed), (torch.zeros(1, 3, 16, 16),))
    return found


def write(out: Path) -> None:
    """One logdir per model under ``out``, as the docs tell users to write them: attention
    models with PyTorch's fused fast path off (ViT inside ``torch.no_grad()``, which the
    tracer's check then agrees with; the text model with the fast path disabled)."""
    described = {}
    for name, (model, inputs) in models().items():
        model.eval()
        writer = SummaryWriter(str(out / name))
        if name == "text_transformer":
            torch.backends.mha.set_fastpath_enabled(False)
            writer.add_graph(model, inputs)
            torch.backends.mha.set_fastpath_enabled(True)
        else:
            with torch.no_grad():
                writer.add_graph(model, inputs)
        writer.close()
        described[name] = {
            "inputs": [list(t.shape) for t in inputs],
            "modules": {path: type(m).__name__ for path, m in model.named_modules() if path},
            # What a trace reads off the module: parameters and buffers (running means).
            "parameters": sorted([*(path for path, _ in model.named_parameters()),
                                  *(path for path, _ in model.named_buffers())]),
        }
    (out / "models.json").write_text(json.dumps(described, indent=1, sort_keys=True))


def main(argv: list[str]) -> int:
    warnings.simplefilter("ignore")  # the tracer's deprecation and tracer warnings
    write(Path(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

