"""Tests of lsqa.study."""
