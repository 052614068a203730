"""The escaping rules (:mod:`graphviz_tb.escaping`) hold as their examples state."""

from __future__ import annotations

import doctest

import graphviz_tb.escaping


def test_the_examples_are_the_rules() -> None:
    """Every example in the module's docstrings gives what it states."""
    result = doctest.testmod(graphviz_tb.escaping)
    assert result.attempted >= 15 and result.failed == 0
