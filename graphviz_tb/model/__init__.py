"""Stage 2, the model: one node per op, one edge per input, typed and shaped
(:mod:`.graph`), with function calls opened into their bodies (:mod:`.calls`)."""
