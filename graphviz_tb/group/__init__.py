"""Stage 3, grouping: the ops gathered into a tree of scopes, function bodies, series, blocks
and sections (:mod:`.tree`), with structural templates (:mod:`.templates`)."""
