"""Tests of lsqa.audit."""
