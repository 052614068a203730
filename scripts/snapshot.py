"""Every picture the project promises to keep, written to one folder, and two folders compared.

A change meant to keep what is drawn (a refactor, a speed-up, a new reader) must leave every
DOT and viewer-data output of the samples, the TF-made training steps and the real-world corpus
byte-identical.  This writes them all:

    python scripts/snapshot.py write snap/before          # on the old code
    python scripts/snapshot.py write snap/after           # on the new code
    python scripts/snapshot.py compare snap/before snap/after

Each input is drawn at the default view and at ``--depth 3``, as DOT and as HTML; the DOT is
kept whole (so a difference can be read) and the viewer's data embedded in the HTML as its
SHA-256 (the page's script is the viewer's build, which changes on its own).  The training
steps are built once with TensorFlow into ``--cache`` (default
``.cache/snapshot``) and reused; the corpus is read from ``../shared/corpus`` when it exists.
An input that fails to load is recorded with its one-line error, which is compared too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
_GRAPH_SUFFIXES = (".pb", ".pbtxt", ".meta")
_VIEWS = {"default": {}, "depth3": {"depth": 3}}


def _script_safe(text: str) -> str:
    """The data's JSON with ``<``, ``>`` and ``&`` escaped, as pages embedded it before they
    deflated it: so a snapshot taken before that change compares with one taken after."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _samples() -> Iterator[Path]:
    samples = ROOT / "samples"
    for pattern in ("*.pb", "*.pbtxt", "*.meta"):
        yield from sorted(samples.glob(pattern))
    yield samples / "saved_model"
    yield from sorted(p for p in (samples / "logs").iterdir() if p.is_dir())


def _corpus() -> Iterator[Path]:
    if not CORPUS.is_dir():
        return
    for path in sorted(CORPUS.rglob("*")):
        if path.is_file() and path.suffix in _GRAPH_SUFFIXES:
            yield path


def _training_steps(cache: Path) -> Iterator[Path]:
    """The TF-made training steps of tests/training_steps.py, built once into the cache."""
    cache.mkdir(parents=True, exist_ok=True)
    names = [*_applications(), "transformer_adamw"]
    missing = [n for n in names if not (cache / f"{n}.pb").exists()]
    if missing:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        sys.path.insert(0, str(ROOT / "tests"))
        import keras
        import tensorflow as tf
        import training_steps as ts

        for name in missing:
            print(f"building {name} with TensorFlow", file=sys.stderr)
            if name == "transformer_adamw":
                graph_def = ts.transformer_step(tf, keras)[0]
            else:
                graph_def = ts.application_step(tf, keras, *ts.APPLICATIONS[name])[0]
            (cache / f"{name}.pb").write_bytes(graph_def.SerializeToString())
    for name in names:
        yield cache / f"{name}.pb"


def _applications() -> list[str]:
    sys.path.insert(0, str(ROOT / "tests"))
    import training_steps as ts

    return sorted(ts.APPLICATIONS)


def _label(path: Path) -> str:
    for base in (ROOT, CORPUS.parent):
        try:
            return str(path.relative_to(base)).replace("/", "__")
        except ValueError:
            continue
    return str(path).replace("/", "__")


def write(out: Path, cache: Path, skip_steps: bool) -> None:
    """Draw every input into ``out``: DOT files and a manifest of HTML hashes and errors."""
    import graphviz_tb
    from graphviz_tb.errors import GraphvizTbError
    from graphviz_tb.write.page import page_json

    out.mkdir(parents=True, exist_ok=True)
    inputs = [*_samples(), *_corpus()]
    if not skip_steps:
        inputs += list(_training_steps(cache))
    manifest: dict[str, str] = {}
    for index, path in enumerate(inputs, 1):
        label = _label(path)
        print(f"[{index}/{len(inputs)}] {label}", file=sys.stderr)
        try:
            graph = graphviz_tb.load(str(path))
        except GraphvizTbError as exc:
            manifest[label] = f"error: {exc}"
            continue
        for view, options in _VIEWS.items():
            try:
                dot = graph.render(format="dot", **options)
                html = graph.render(format="html", **options)
            except GraphvizTbError as exc:
                manifest[f"{label}.{view}"] = f"error: {exc}"
                continue
            (out / f"{label}.{view}.dot").write_text(str(dot))
            page = html.decode() if isinstance(html, bytes) else str(html)
            manifest[f"{label}.{view}.data"] = hashlib.sha256(
                _script_safe(page_json(page)).encode()).hexdigest()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    print(f"wrote {len(manifest)} records to {out}", file=sys.stderr)


def compare(before: Path, after: Path) -> int:
    """Print every output that differs; exit 1 if any does."""
    old = json.loads((before / "manifest.json").read_text())
    new = json.loads((after / "manifest.json").read_text())
    changed = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
    dots = sorted({p.name for p in before.glob("*.dot")} | {p.name for p in after.glob("*.dot")})
    for name in dots:
        a, b = before / name, after / name
        if not (a.exists() and b.exists()) or a.read_bytes() != b.read_bytes():
            changed.append(name)
    for name in changed:
        print(f"differs: {name}")
    print(f"{len(changed)} of {len(old) + len(dots)} outputs differ")
    return 1 if changed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="draw every input into a folder")
    w.add_argument("out", type=Path)
    w.add_argument("--cache", type=Path, default=ROOT / ".cache" / "snapshot")
    w.add_argument("--no-steps", action="store_true", help="leave out the TF-made steps")
    c = sub.add_parser("compare", help="compare two folders written by 'write'")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "write":
        write(args.out, args.cache, args.no_steps)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
