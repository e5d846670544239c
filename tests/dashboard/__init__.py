"""Tests of lsqa.dashboard."""
