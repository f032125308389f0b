"""Every log format the training section reads, on committed samples; whatever a reader does
not understand is counted, never dropped in silence."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from acceval.training.ingest import guess_format, read_log
from acceval.training.spec import Columns
from acceval.training.trace import read_trace

FIXTURES = Path(__file__).parents[2] / "fixtures" / "training"


def test_jsonl_reads_steps_evals_events_and_counts_the_rest() -> None:
    log = read_log(FIXTURES / "steps.jsonl", None, Columns())
    assert log.format == "jsonl"
    assert [s.step for s in log.steps][:3] == [1, 2, 3]
    assert math.isnan(next(s.loss for s in log.steps if s.step == 8 and s.t_s == 1.45))
    assert [(e.step, e.loss) for e in log.evals] == [(4, 2.4), (8, 1.95), (10, 1.75)]
    kinds = [e.kind for e in log.events]
    assert kinds.count("startup") == 2 and "interruption" in kinds and "run_end" in kinds
    # not JSON, an object with no known field, a loss that is not a number
    assert log.unread.count == 3
    assert any("not JSON" in x for x in log.unread.examples)
    assert any("'high' is not a number" in x for x in log.unread.examples)
    assert log.unused == {"lr": 1}
    assert log.end_s == 2.7


def test_csv_with_a_column_mapping_and_unix_stamps() -> None:
    cols = Columns(step="iteration", time_s="elapsed", loss="train_loss", grad_norm="gnorm",
                   eval_loss="val_loss")
    log = read_log(FIXTURES / "steps.csv", "csv", cols)
    assert [s.step for s in log.steps] == [1, 2, 3, 5]
    assert log.steps[0].t_s == 0.0 and log.steps[-1].t_s == 2.0  # made relative
    assert [(e.step, e.loss) for e in log.evals] == [(3, 2.5), (5, 1.8)]
    assert log.unread.count == 2          # "abc" as a loss, and the empty row
    assert log.unused == {"note": 1}   # the "bad value" row is not understood at all


def test_mllog_lines() -> None:
    """The clock starts at run_start (MLPerf's timed region); init is kept beside it; the
    fixture names llama2_70b_lora, whose eval_accuracy is an eval loss by the rules."""
    log = read_log(FIXTURES / "mllog.txt", None, Columns())
    assert log.format == "mllog"
    assert [(e.step, e.loss, e.accuracy) for e in log.evals] == [(3072, 0.941, None),
                                                                  (6144, 0.924, None)]
    assert [e.t_s for e in log.evals] == pytest.approx([90.0, 180.0])  # from run_start
    assert log.steps[0].loss == 1.01
    startup = log.events_of("startup")[0]
    assert startup.duration_s == pytest.approx(60.0)
    assert log.end_s == pytest.approx(180.2)
    assert log.mlperf is not None
    assert (log.mlperf.benchmark, log.mlperf.status) == ("llama2_70b_lora", "success")
    assert log.mlperf.run_s == pytest.approx(180.2) and log.mlperf.init_s == pytest.approx(60.0)
    # the launcher's lines, the evaluation with no step, the line that is not JSON
    assert log.unread.count == 4
    assert log.unused == {}
    assert log.evals[0].line == 8          # errors can name the line


def test_mllog_eval_accuracy_can_be_mapped_to_a_loss() -> None:
    """columns.eval_loss names the key that holds a loss (whatever the benchmark)."""
    log = read_log(FIXTURES / "mllog.txt", "mllog", Columns(eval_loss="eval_accuracy"))
    assert [e.loss for e in log.evals] == [0.941, 0.924]
    assert all(e.accuracy is None for e in log.evals)


def test_tensorboard_event_file_from_a_real_writer() -> None:
    pytest.importorskip("tensorboard")
    path = FIXTURES / "events.out.tfevents.fixture"
    assert guess_format(path) == "tensorboard"
    cols = Columns(loss="train/loss", grad_norm="train/grad_norm", eval_loss="eval/loss")
    log = read_log(path, None, cols)
    assert [s.step for s in log.steps] == list(range(1, 11))
    assert log.steps[0].loss == pytest.approx(2.8)
    assert [(e.step, round(e.loss or 0, 3)) for e in log.evals] == [(5, 1.65), (10, 0.4)]
    assert log.unused == {"train/lr": 10}
    assert log.unread.count == 1 and "weights" in log.unread.examples[0]  # a histogram


def test_kineto_trace_of_the_builtin_workload() -> None:
    tr = read_trace(FIXTURES / "trace-ddp2.json.gz")
    assert (tr.kind, tr.backend, tr.world_size) == ("cpu", "gloo", 2)
    (step,) = tr.steps
    assert step.step == 8
    assert 0 < step.compute_ms < step.duration_ms
    assert step.communication_ms > 0 and step.overlap_ms <= step.communication_ms
    total = step.compute_ms + step.communication_ms - step.overlap_ms + step.idle_ms
    assert total == pytest.approx(step.duration_ms, rel=1e-6)
    assert tr.unread.count == 0


def test_a_missing_log_names_the_file(tmp_path: Path) -> None:
    from acceval.errors import StudyError

    with pytest.raises(StudyError, match="does not exist"):
        read_log(tmp_path / "nope.jsonl", None, Columns())


@pytest.mark.parametrize("stamp", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_trace_event_with_a_stamp_that_is_not_finite_is_counted_unread(
        tmp_path: Path, stamp: str) -> None:
    """The trace's JSON keeps such numbers (no hook per number); each reader skips the event
    and counts it, and reads the rest as before: Kineto's CPU split, the GPU (HTA) split,
    and a Neuron profile's."""
    import gzip
    import json

    cpu = json.loads(gzip.decompress((FIXTURES / "trace-ddp2.json.gz").read_bytes()))
    clean = read_trace(FIXTURES / "trace-ddp2.json.gz")
    bad = dict(cpu["traceEvents"][0], ph="X", name="aten::bad", ts="@stamp", dur=1)
    text = json.dumps({**cpu, "traceEvents": [*cpu["traceEvents"], bad]})
    path = tmp_path / "cpu.json"
    path.write_text(text.replace('"@stamp"', stamp))
    tr = read_trace(path)
    assert tr.unread.count == 1 and "aten::bad" in tr.unread.examples[0]
    assert tr.steps == clean.steps and tr.events == clean.events + 1
    # Who the trace says it is: a rank that is not a number is not known (the reader then
    # numbers the ranks by their order).
    odd = {**cpu, "distributedInfo": {**cpu["distributedInfo"], "rank": "@stamp"}}
    path.write_text(json.dumps(odd).replace('"@stamp"', stamp))
    tr = read_trace(path)
    assert (tr.rank, tr.world_size, tr.backend) == (None, clean.world_size, clean.backend)
    assert tr.steps == clean.steps

    gpu_file = FIXTURES / "hta-2ranks" / "sampled_rank-0.json.gz"
    gpu = json.loads(gzip.decompress(gpu_file.read_bytes()))
    kernel = next(e for e in gpu["traceEvents"] if e.get("cat") == "kernel")
    clean_gpu = read_trace(gpu_file)
    odd = dict(kernel, ts="@stamp", name="odd_kernel")
    text = json.dumps({**gpu, "traceEvents": [*gpu["traceEvents"], odd]})
    path = tmp_path / "gpu.json"
    path.write_text(text.replace('"@stamp"', stamp))
    tr = read_trace(path)
    assert tr.unread.count == clean_gpu.unread.count + 1
    assert tr.rank_split == clean_gpu.rank_split and tr.steps == clean_gpu.steps

    neuron = json.loads((FIXTURES / "neuron-system_profile.json").read_text())
    clean_n = read_trace(FIXTURES / "neuron-system_profile.json")
    key = "trace_events"
    event = dict(neuron[key][0], timestamp="@stamp")
    text = json.dumps({**neuron, key: [*neuron[key], event]})
    path = tmp_path / "neuron.json"
    path.write_text(text.replace('"@stamp"', stamp))
    tr = read_trace(path)
    assert tr.steps == clean_n.steps
    assert tr.unread.count == clean_n.unread.count + 1
    # A core index that is not a number is no core index: the event's group names it.
    odd_core = [dict(e, lnc_idx="@stamp") for e in neuron[key]]
    path.write_text(json.dumps({**neuron, key: odd_core}).replace('"@stamp"', stamp))
    assert read_trace(path).steps == clean_n.steps
