"""Kill this process with SIGKILL at the k-th file step of a records compaction.

Put this folder first on PYTHONPATH and set ``ACCEVAL_KILL_COMPACTION_STEP=k``: when
``records.parquet`` is compacted, every durable step the store takes (a Parquet row group
or file written, an fsync, a rename, a removal) is counted, and the k-th is replaced by
SIGKILL, so no cleanup code runs, as when the machine loses power or the OOM killer hits.
Without the variable nothing is changed.
"""

from __future__ import annotations

import os

if os.environ.get("ACCEVAL_KILL_COMPACTION_STEP"):
    import sys

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from killpoints import arm_records_compaction

    arm_records_compaction(int(os.environ["ACCEVAL_KILL_COMPACTION_STEP"]))
