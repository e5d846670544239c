"""Tests of lsqa.stats."""
