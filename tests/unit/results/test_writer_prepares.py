"""The records writer pays pyarrow's one-time first-conversion cost (an import of pandas,
when installed: about 0.3 s holding the interpreter) when it is made, before any load, not in
its thread during the first point's flush."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_a_new_writer_has_already_made_pyarrow_look_for_pandas(tmp_path: Path) -> None:
    code = (
        "import importlib.util, sys\n"
        "from acceval.results.store import RecordWriter\n"
        "before = 'pandas' in sys.modules\n"
        f"w = RecordWriter({str(tmp_path)!r})\n"
        "print(before, 'pandas' in sys.modules, importlib.util.find_spec('pandas') is not None)\n"
        "w.finalize()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    before, after, installed = (x == "True" for x in out)
    assert not before               # importing the store does not pay it
    assert after == installed       # making a writer did (pandas is in the dev install)
    assert installed
