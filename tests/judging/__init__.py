"""Tests of lsqa.judging."""
