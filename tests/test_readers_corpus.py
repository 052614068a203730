"""The real-world GraphDef corpus in ../shared/corpus: every file reads, or fails clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphviz_tb.errors import InputError
from graphviz_tb.options import LoadOptions
from graphviz_tb.read import discover, select

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason=f"no conformance corpus at {CORPUS}")

MALFORMED = "tf-graphdef2mlir/graph-malformed.pbtxt"
FILES = sorted(p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*.pbtxt")) \
    if CORPUS.is_dir() else []


@pytest.mark.parametrize("name", [f for f in FILES if f != MALFORMED])
def test_corpus_file_loads(name):
    discovery = discover(CORPUS / name)
    for source in discovery.graphs:
        graph = source.load()
        assert graph.node or graph.library.function
    select(discovery, LoadOptions())


def test_malformed_file_reports_the_line():
    with pytest.raises(InputError) as error:
        discover(CORPUS / MALFORMED)
    assert f"{MALFORMED}:3:1: not a GraphDef in text format" in str(error.value)
    assert "it starts with 'this'" in str(error.value)


def test_half_plus_two_saved_model_text():
    (path,) = CORPUS.glob("tf-cc-saved-model/half_plus_two_pbtxt/**/saved_model.pbtxt")
    discovery = discover(path)
    assert discovery.source_kind == "savedmodel"
    source = select(discovery, LoadOptions())
    assert source.tags == ("serve",)
    assert len(source.load().node) == 60
    assert [(s.name, s.tensor) for s in source.inputs] == [("x", "x:0")]
    assert [(s.name, s.tensor) for s in source.outputs] == [("y", "y:0")]
