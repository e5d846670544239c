"""Judges: each kind as one record, the tasks they are given, their guidelines, the semantic-similarity rater."""
