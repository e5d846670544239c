"""``python -m lsqa.cli``: the same command line as the ``lsqa`` script (tests run it this way)."""

from lsqa.cli import main

main()
