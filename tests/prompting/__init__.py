"""Tests of lsqa.prompting."""
