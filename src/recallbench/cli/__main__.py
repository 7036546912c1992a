"""``python -m recallbench.cli [table|view|human-eval] ...``: the run command, or with a
subcommand first that command (the Makefile's spelling, which works without reinstalled console
scripts)."""

import sys

from recallbench.cli import SUBCOMMANDS, main

if __name__ == "__main__":
    if (command := SUBCOMMANDS.get(sys.argv[1] if len(sys.argv) > 1 else "")) is not None:
        command(sys.argv[2:])
    else:
        main()
