"""Sphinx configuration of graphviz_tb's own documentation (built by ``make docs``).

The pictures are drawn at build time by the package's own ``tbgraph`` directive; the local
extension in ``_ext/`` adds the CLI reference, the sample gallery and live command output.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import graphviz_tb

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
# TensorFlow (used by the shape-debugging page) is otherwise chatty on stderr.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

project = "graphviz_tb"
author = "the graphviz_tb authors"
copyright = "the graphviz_tb authors"
release = version = graphviz_tb.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.graphviz",
    "graphviz_tb.sphinx",
    "tbgraph_docs",
]

exclude_patterns = ["_build"]
templates_path: list[str] = []
html_theme = "alabaster"
html_title = f"graphviz_tb {release}"
html_theme_options = {"page_width": "1180px", "sidebar_width": "220px"}
pygments_style = "sphinx"

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
napoleon_google_docstring = False
napoleon_numpy_docstring = True
# Attributes as fields of the class, not as separate entries that would repeat the dataclass
# fields autodoc documents.
napoleon_use_ivar = True

tbgraph_docs_samples = str(ROOT / "samples")
tbgraph_docs_root = str(ROOT)
