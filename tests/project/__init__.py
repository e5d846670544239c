"""The repository itself: layout, docs, packaging, benches' own checks, house rules."""
