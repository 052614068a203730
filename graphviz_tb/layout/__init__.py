"""Stage 5, layout: each open group laid out by Graphviz (:mod:`.groups`), then composed into
one scene (:mod:`.scene`)."""
