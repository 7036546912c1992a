"""``python -m recallbench.cli [table] ...``: the run command, or with ``table`` first the table
command (the Makefile's spelling, which works without reinstalled console scripts)."""

import sys

from recallbench.cli import main, table_main

if __name__ == "__main__":
    if sys.argv[1:2] == ["table"]:
        table_main(sys.argv[2:])
    else:
        main()
