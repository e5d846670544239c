"""Bad input by category: malformed files, killed runs, full disks, names, bounds."""
