"""Tests of lsqa.cli."""
