"""The layout cache: a render drawn again asks Graphviz nothing, and a session that draws graph
after graph (a notebook, a docs build) keeps only the recent layouts, not every one it made."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import SAMPLES

import graphviz_tb
from graphviz_tb.layout import dot_layout, engine


class _Counting:
    """An engine answering each DOT text with a dict naming it, counting what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def layout(self, sources: list[str]) -> list[dict]:
        self.asked.extend(sources)
        return [{"source": s} for s in sources]


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> Any:
    """An empty module cache of the kind the module makes, restored afterwards."""
    monkeypatch.setattr(dot_layout, "_cache", type(dot_layout._cache)())
    return dot_layout._cache


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> _Counting:
    fake = _Counting()
    monkeypatch.setattr(engine, "current", lambda: fake)
    return fake


def test_a_session_drawing_graph_after_graph_keeps_only_recent_layouts(
        fresh_cache: Any, counting: _Counting) -> None:
    """Twelve million characters of distinct layout problems (about 200 MB of answers): each
    call still gets every answer, and the cache keeps the latest, not all of them."""
    sources = [f"digraph G {{ n{i} }}".ljust(40_000) for i in range(300)]
    for start in range(0, len(sources), 30):  # one render after another
        chunk = sources[start:start + 30]
        assert dot_layout.layout_all(chunk, None) == [{"source": s} for s in chunk]
    assert len(counting.asked) == len(sources)
    assert 0 < len(dot_layout._cache) < len(sources)
    counting.asked.clear()
    dot_layout.layout_all(sources[-30:], None)  # the last render, drawn again: all kept
    assert counting.asked == []
    dot_layout.layout_all(sources[:1], None)  # the first: long gone
    assert counting.asked == sources[:1]


def test_one_render_larger_than_the_cache_gets_every_answer(
        counting: _Counting, monkeypatch: pytest.MonkeyPatch) -> None:
    """What one call lays out is answered from the call's own results, whatever the cache
    kept; a text over the whole budget is laid out and not kept."""
    small = dot_layout.LayoutCache(max_chars=100)
    monkeypatch.setattr(dot_layout, "_cache", small)
    sources = [f"digraph G {{ n{i} }}".ljust(30) for i in range(10)] + ["x" * 101]
    assert dot_layout.layout_all(sources + sources, None) == [
        {"source": s} for s in sources + sources]
    assert len(counting.asked) == len(sources)  # each distinct text once
    assert len(small) == 3 and small.chars == 90


def test_the_least_recently_used_goes_first() -> None:
    cache = dot_layout.LayoutCache(max_chars=30)
    for name in "abc":
        cache.add(name * 10, {"name": name})
    assert cache.held(["a" * 10, "z"]) == {"a" * 10: {"name": "a"}}  # a used again
    cache.add("d" * 10, None)  # Graphviz's refusal is an answer too: b goes, not a
    assert cache.held(["a" * 10, "b" * 10, "c" * 10, "d" * 10]) == {
        "a" * 10: {"name": "a"}, "c" * 10: {"name": "c"}, "d" * 10: None}
    assert len(cache) == 3 and cache.chars == 30


def test_a_graph_drawn_again_asks_graphviz_nothing(fresh_cache: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A notebook cell run again, or the page after the SVG of the same view, reuses every
    group's layout."""
    batches: list[list[str]] = []
    real = dot_layout._run_batch

    def spy(sources: list[str]) -> list[dict | None]:
        batches.append(sources)
        return real(sources)

    monkeypatch.setattr(dot_layout, "_run_batch", spy)
    graph = graphviz_tb.load(SAMPLES / "mnist_tf1.pb")
    first = graph.render(format="dot", depth=3)
    assert batches
    batches.clear()
    assert graph.render(format="dot", depth=3) == first
    graph.render(format="html", depth=3)
    assert batches == []
