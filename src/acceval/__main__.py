"""``python -m acceval`` is the ``acceval`` command."""

from acceval.cli import run_main

run_main()
