"""Tests of lsqa.text."""
