"""Stage 4, the view: which groups a picture opens (:mod:`.opening`)."""
