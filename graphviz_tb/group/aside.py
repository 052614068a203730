"""What the first picture sets aside, as rules the viewer applies too: the names and op types
of TensorFlow's bookkeeping (``init``, ``save``, summaries, the global step), which the
grouping gives no loose ops (:mod:`graphviz_tb.group.training`) and the view leaves closed, and
the quartile rule that moves a group's high-degree children to its side column
(:mod:`graphviz_tb.group.auxiliary`).  The viewer's ``layout.js`` applies both again to a group
opened in the page.

The viewer gets them at build time: ``python graphviz_tb/group/aside.py`` prints
:func:`viewer_rules` as JSON, which ``scripts/build-viewer.mjs`` writes into the viewer's
generated style module beside :mod:`graphviz_tb.style`'s.  So this module imports nothing of
the package: it runs as a script too.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["AUX_IQR_FACTOR", "AUX_MIN_CHILDREN", "AUX_MIN_DEGREE", "BOOKKEEPING_NAMES",
           "BOOKKEEPING_OPS", "viewer_rules"]

#: Children named like TensorFlow's bookkeeping (``init``, ``save``, summaries, the global
#: step): the first picture leaves them closed, and the side column takes them.
BOOKKEEPING_NAMES = (r"^(init(_\d+)?|save(_\d+)?|summaries|MergeSummary(_\d+)?|global_step|"
                     r"report_uninitialized_variables|restore_all|saver_filename|train_op|"
                     r"group_deps)$")
#: Op types that are bookkeeping whatever they are called.  (A control-flow ``Merge`` is
#: dataflow, not bookkeeping, though TensorFlow names it ``Merge`` too.)
BOOKKEEPING_OPS = ("MergeSummary", "MergeV2Checkpoints")
#: The quartile rule that moves high-degree children aside: a group needs this many
#: children, and an outlier at least this degree, past the upper quartile by this many
#: interquartile ranges.
AUX_MIN_CHILDREN = 6
AUX_MIN_DEGREE = 4
AUX_IQR_FACTOR = 3.0


def viewer_rules() -> dict[str, Any]:
    """What the viewer's code needs from here."""
    return {
        "bookkeepingNames": BOOKKEEPING_NAMES,
        "bookkeepingOps": list(BOOKKEEPING_OPS),
        "auxMinChildren": AUX_MIN_CHILDREN,
        "auxMinDegree": AUX_MIN_DEGREE,
        "auxIqrFactor": AUX_IQR_FACTOR,
    }


if __name__ == "__main__":  # scripts/build-viewer.mjs: the viewer's copy, as JSON
    print(json.dumps(viewer_rules(), sort_keys=True))
