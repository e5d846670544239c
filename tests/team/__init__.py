"""Tests of lsqa.team."""
