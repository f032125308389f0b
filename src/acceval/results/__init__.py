"""Records, samples, the run folder layout and the RunResult."""

from typing import TYPE_CHECKING

from acceval._lazy import exports

if TYPE_CHECKING:
    from acceval.results.records import RECORD_SCHEMA, Record, records_to_table
    from acceval.results.store import RecordWriter, read_records

# The parts load when a name is first used, not when one of this package's modules is
# imported (a command that reads one spec pays for nothing else).
__getattr__ = exports(__name__, {
    "RECORD_SCHEMA": "acceval.results.records", "Record": "acceval.results.records",
    "records_to_table": "acceval.results.records", "RecordWriter": "acceval.results.store",
    "read_records": "acceval.results.store"})

__all__ = ["RECORD_SCHEMA", "Record", "RecordWriter", "read_records", "records_to_table"]
