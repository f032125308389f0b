"""`acceval report --recompute --format json` loads what a re-analysis and its JSON need, and
none of what a run needs: no load generator or its live display, no server, no HTTP client,
no probes, no task generators, no fault injector, no HTML or Markdown renderer. Every process
start of acceval pays for what it imports. (pandas is not on the list: pyarrow imports it at
its first array built from Python or NumPy values, whatever acceval does.)"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).parents[1] / "fixtures" / "demo-run"

#: Modules of a run, or of other formats, that the JSON re-analysis has no use for.
NOT_NEEDED = {
    "acceval.pipeline", "acceval.pipeline.measure", "acceval.loadgen.runner",
    "acceval.loadgen.progress", "rich", "acceval.serve._server", "acceval.serve._http",
    "acceval.serve._process", "acceval.targets.openai", "acceval.targets.factories",
    "acceval.probes.cpu", "acceval.probes.factories", "psutil", "acceval.tasks._generators",
    "acceval.tasks._checkers", "acceval.interruption.inject", "acceval.report.html",
    "acceval.report.markdown", "aiohttp",
}

_CODE = """
import sys
from acceval.cli import main
try:
    main(["report", sys.argv[1], "--recompute", "--format", "json", "--out", sys.argv[2]])
except SystemExit as exc:
    assert exc.code in (0, None), exc.code
print(" ".join(sorted(sys.modules)))
"""


def test_recompute_json_imports_nothing_of_a_run(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, "-c", _CODE, str(run), str(out)],
                          capture_output=True, text=True, check=True)
    loaded = set(proc.stdout.split())
    assert {"acceval.analysis", "acceval.training.analyze", "acceval.agents.analyze"} <= loaded
    assert sorted(loaded & NOT_NEEDED) == []
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["run_id"] and len(result["targets"]) == 3 and result["training"]
