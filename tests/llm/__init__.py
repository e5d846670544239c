"""Tests of lsqa.llm."""
