"""``python -m graphviz_tb`` runs the ``tbgraph`` command."""

from .cli import run

run()
