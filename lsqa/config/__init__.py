"""Settings, the study config schema, and what a system or judge name stands for."""
