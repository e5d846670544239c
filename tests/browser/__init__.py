"""Tests that drive the dashboard in Debian's chromium through Playwright."""
