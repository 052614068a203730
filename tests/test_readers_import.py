"""The readers stay importable without loading TensorFlow."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_importing_readers_does_not_import_tensorflow():
    code = (
        "import sys, graphviz_tb.read, graphviz_tb.read.live, graphviz_tb.read.dtypes\n"
        "heavy = sorted(m for m in ('tensorflow', 'keras', 'torch', 'h5py') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == ""


def _import_fake_tensorflow(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    """Call ``import_tensorflow`` in a fresh process whose ``tensorflow`` is a stand-in
    writing ``body``'s lines to file descriptor 2 as TensorFlow's C++ runtime does."""
    fake = tmp_path / "tensorflow"
    fake.mkdir()
    (fake / "__init__.py").write_text(f"import os\n{body}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TF_CPP")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), *sys.path])
    code = ("from graphviz_tb.read.tf_loader import import_tensorflow\n"
            "import_tensorflow('test')\nprint('imported')\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)


def test_only_tensorflow_start_up_lines_are_dropped(tmp_path: Path) -> None:
    """TensorFlow's start-up noise is dropped; any other line written to stderr while it
    starts (a real error) still reaches the user, in order."""
    done = _import_fake_tensorflow(tmp_path, "\n".join([
        "os.write(2, b'I0000 All log messages before absl::InitializeLog() is called\\n')",
        "os.write(2, b'first real line\\n')",
        "os.write(2, b'I tensorflow: oneDNN custom operations are on.\\n')",
        "os.write(2, b'second real line\\n')",
    ]))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "imported\n"
    assert done.stderr.splitlines() == ["first real line", "second real line"]


def test_lines_before_a_crash_in_tensorflow_start_up_are_seen(tmp_path: Path) -> None:
    """A process killed while TensorFlow starts (a segfault in its runtime) has passed on
    what it wrote before: the lines that say why are not lost with it."""
    done = _import_fake_tensorflow(tmp_path, "\n".join([
        "import time",
        "os.write(2, b'oneDNN custom operations are on\\n')",
        "os.write(2, b'Fatal: illegal instruction in the runtime\\n')",
        "time.sleep(1)",
        "os._exit(134)",
    ]))
    assert done.returncode == 134
    assert done.stderr.splitlines() == ["Fatal: illegal instruction in the runtime"]
