"""README's command table, generated from the one list of commands (``lsqa/cli/commands.py``).

    python scripts/readme_commands.py           # print the table
    python scripts/readme_commands.py --check   # exit 1 when README's table differs from the list
    python scripts/readme_commands.py --write   # put the list's table into README

``tests/project/test_docs.py`` runs the same comparison.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsqa.cli.commands import readme_table  # noqa: E402

README = ROOT / "README.md"
HEADER = "| command | what it does |"


def table_span(text: str) -> tuple[int, int]:
    """Where README's command table is: from its header row to the end of its last row."""
    section = text.index("\n## Command line\n")
    start = text.index(HEADER, section)
    end = start
    while True:
        nxt = text.find("\n", end)
        if nxt < 0 or not text.startswith("|", nxt + 1):
            return start, (len(text) if nxt < 0 else nxt)
        end = nxt + 1


def readme_with_table(text: str) -> str:
    start, end = table_span(text)
    return text[:start] + readme_table() + text[end:]


def main(argv: list[str]) -> int:
    text = README.read_text(encoding="utf-8")
    if "--write" in argv:
        README.write_text(readme_with_table(text), encoding="utf-8")
        return 0
    if "--check" in argv:
        if readme_with_table(text) != text:
            print("README's command table differs from lsqa/cli/commands.py: run "
                  "python scripts/readme_commands.py --write", file=sys.stderr)
            return 1
        return 0
    print(readme_table())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
