"""``python -m recallbench.cli [table|human-eval] ...``: the run command, or with ``table`` first
the table command, with ``human-eval`` the human-study command (the Makefile's spelling, which
works without reinstalled console scripts)."""

import sys

from recallbench.cli import human_eval_main, main, table_main

if __name__ == "__main__":
    if sys.argv[1:2] == ["table"]:
        table_main(sys.argv[2:])
    elif sys.argv[1:2] == ["human-eval"]:
        human_eval_main(sys.argv[2:])
    else:
        main()
