"""The readers stay importable without loading TensorFlow."""

from __future__ import annotations

import subprocess
import sys


def test_importing_readers_does_not_import_tensorflow():
    code = (
        "import sys, graphviz_tb.read, graphviz_tb.read.live, graphviz_tb.read.dtypes\n"
        "heavy = sorted(m for m in ('tensorflow', 'keras', 'torch', 'h5py') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""
