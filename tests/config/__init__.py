"""Tests of lsqa.config."""
