"""``python -m graphviz_tb`` runs the ``tbgraph`` command."""

import sys

from .cli import main

sys.exit(main())
