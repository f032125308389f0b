"""Records, samples, the run folder layout and the RunResult."""

from acceval.results.records import RECORD_SCHEMA, Record, records_to_table
from acceval.results.store import RecordWriter, read_records

__all__ = ["RECORD_SCHEMA", "Record", "RecordWriter", "read_records", "records_to_table"]
