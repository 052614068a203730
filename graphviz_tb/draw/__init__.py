"""Stage 6, drawing: the scene as DOT (:mod:`.dot`) and pictures (:mod:`.svg`), or as the
viewer's page data (:mod:`.html`)."""
