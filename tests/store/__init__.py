"""Tests of lsqa.store."""
