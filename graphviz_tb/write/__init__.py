"""Stage 7, writing: files written whole or not at all (:mod:`.files`)."""
