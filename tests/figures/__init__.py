"""Tests of lsqa.figures."""
