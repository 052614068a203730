"""tbgraph inside TensorBoard: the ``tbgraph`` tab, installed with the package.

``pip install graphviz_tb`` registers :class:`TbgraphPlugin` through the
``tensorboard_plugins`` entry point; ``tensorboard --logdir D`` then shows a *tbgraph* tab
whenever a run of D logged a graph or run metadata.  The tab is the HTML viewer for the chosen
run's graph, with the diff against another run and the colourings by recorded cost, drawn by
TensorBoard's own process from what its data provider serves (:mod:`.runs`), off its request
threads and cached by content (:mod:`.renders`, :mod:`.pages`); the routes are listed in
:mod:`.plugin`.
"""

from .plugin import TbgraphPlugin

__all__ = ["TbgraphPlugin"]
