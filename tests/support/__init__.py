"""Shared test tooling: servers, browser helpers, oracles, data slices' readers."""
