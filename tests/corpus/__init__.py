"""Tests of lsqa.corpus."""
