"""The paper's prompts (Appendix A) as versioned templates, and the parsers of their declared output formats."""
