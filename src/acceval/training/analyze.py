"""``training_section``: the training scorecard of a run, from stored logs only.

Reads each platform's run logs (ingested, or written into the run folder by
:mod:`acceval.training.execute`), applies the pure metrics of :mod:`acceval.training.metrics`
and prices one run to target with the same bill and energy boundary as an inference target
(:mod:`acceval.economics`). Ranking is the verdict's (``acceval.verdict.decide_training``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from acceval.economics.bill import BillResult, compute_bill
from acceval.economics.catalog import Catalog
from acceval.economics.energy import EnergyResult, energy_outputs
from acceval.economics.inputs import Measured, build_cost_inputs, estimate_energy
from acceval.economics.spec import StudyCosts
from acceval.errors import AccevalError
from acceval.models import resolve_model
from acceval.training import metrics as m
from acceval.training.checks import no_data
from acceval.training.execute import read_execution, run_log_path
from acceval.training.ingest import log_runs, rank_traces, read_log
from acceval.training.log import RunLog
from acceval.training.mlperf import BenchmarkRule
from acceval.training.quality import resolve
from acceval.training.ranks import compute_comm
from acceval.training.result import (
    MAX_POINTS,
    Curve,
    GoodputResult,
    IngestResult,
    InterruptionResult,
    MfuResult,
    PlatformTrainingResult,
    RestartsResult,
    SpikeResult,
    StabilityResult,
    TimeToTargetResult,
    TrainingCostResult,
    TrainingResult,
    TrainingRunResult,
)
from acceval.training.spec import Columns, ModelShape, QualityTarget, Training, TrainingPlatform

_PEAK_FIELD = {"bf16": "peak_bf16", "fp8": "peak_fp8"}


# --- one run -----------------------------------------------------------------------------------

def _every(n: int) -> int:
    return max(1, math.ceil(n / MAX_POINTS))


def _clean(v: float | None) -> float | None:
    return v if v is not None and math.isfinite(v) else None


def _curve(log: RunLog, metric: str) -> Curve:
    k = _every(len(log.steps))
    steps = log.steps[::k]
    return Curve(step=[s.step for s in steps], t_s=[s.t_s for s in steps],
                 loss=[_clean(s.loss) for s in steps],
                 eval_step=[e.step for e in log.evals], eval_t_s=[e.t_s for e in log.evals],
                 eval_value=[_clean(e.value(metric)) for e in log.evals])


def _ingest(log: RunLog) -> IngestResult:
    return IngestResult(source=log.source, format=log.format, records=log.lines,
                        unread=log.unread.count, unread_examples=list(log.unread.examples),
                        unused=dict(log.unused))


def _spikes(sp: list[m.Spike]) -> list[SpikeResult]:
    return [SpikeResult(metric=s.metric, step=s.step, t_s=s.t_s, value=s.value, z=s.z)
            for s in sp]


def _converged(log: RunLog, reached: m.Reached | None) -> tuple[float | None, str]:
    """A run's time to target and, when it does not count, why. An MLPerf log: its
    ``run_stop - run_start`` when ``run_stop`` says ``success`` and an evaluation reached
    the target (MLPerf's rule); any other log: the first evaluation at the target."""
    st = log.mlperf
    if st is None or st.run_start_ms is None:
        return (reached.t_s if reached else None), ""
    if st.run_stop_ms is None:
        return None, "no run_stop: the run did not finish"
    if st.status != "success":
        crossed = (f"; an evaluation reached the target at {reached.t_s:.3f} s, but MLPerf "
                   "counts only status success" if reached and reached.t_s is not None else "")
        return None, f"run_stop status {st.status or 'missing'}: not converged{crossed}"
    if reached is None:
        return None, "run_stop status success, but no evaluation reached the target"
    return st.run_s, ""


def _run_result(p: TrainingPlatform, index: int, log: RunLog, target: QualityTarget,
                spec: Training, catalog: Catalog | None) -> TrainingRunResult:
    reached = m.first_reaching(log, target)
    ttt, note = _converged(log, reached)
    st = m.stability(log.steps, z=spec.spike_z, window=spec.spike_window)
    rs = m.restarts(log)
    gp = m.goodput(log, rs)
    ends = [e for e in log.events_of("run_end") if e.value is not None]
    cpu_s = ends[-1].value if ends and p.builtin is not None else None
    device_j = _device_energy(p, log, cpu_s)
    last = next((e.value(target.metric) for e in reversed(log.evals)
                 if e.value(target.metric) is not None), None)
    ml = log.mlperf
    return TrainingRunResult(
        index=index, seed=log.seed, ingest=_ingest(log), reached=ttt is not None,
        time_to_target_s=ttt,
        step_to_target=reached.step if reached and ttt is not None else None,
        value_at_target=reached.value if reached and ttt is not None else None,
        last_value=_clean(last),
        wall_s=log.end_s, cpu_s=cpu_s, device_energy_j=device_j,
        energy_j=(_energy(p, device_j, log.end_s, catalog).joules
                  if log.end_s else None),
        stability=StabilityResult(loss_spikes=_spikes(st.loss_spikes),
                                  grad_norm_spikes=_spikes(st.grad_norm_spikes),
                                  nan_steps=st.nan_steps, diverged=st.diverged,
                                  divergence=st.divergence),
        restarts=RestartsResult(
            count=rs.count, lost_s=rs.lost_s, checkpoint_saves=rs.checkpoint_saves,
            checkpoint_save_s=rs.checkpoint_save_s, checkpoint_restores=rs.checkpoint_restores,
            checkpoint_restore_s=rs.checkpoint_restore_s,
            interruptions=[InterruptionResult(
                t_s=i.t_s, checkpoint_step=i.checkpoint_step, reached_step=i.reached_step,
                lost_steps=i.lost_steps, lost_s=i.lost_s, time_to_resume_s=i.time_to_resume_s,
                time_to_recover_s=i.time_to_recover_s, detail=i.detail)
                for i in rs.interruptions]),
        goodput=None if gp is None else GoodputResult(
            wall_s=gp.wall_s, productive_s=gp.productive_s, goodput=gp.goodput,
            badput_s=gp.badput_s, step_time_from=gp.step_time_from),
        curve=_curve(log, target.metric),
        benchmark=ml.benchmark if ml else None, init_s=ml.init_s if ml else None,
        run_status=ml.status if ml else None, note=note)


def _device_energy(p: TrainingPlatform, log: RunLog, cpu_s: float | None) -> float | None:
    """A run's energy at the device: its ``energy`` events' joules (measured), else the
    ranks' CPU time x watts per core (the cpu probe's estimate); None otherwise (the bill
    then falls back to TDP x time, as for inference)."""
    logged = [e.value for e in log.events_of("energy") if e.value is not None]
    if logged:
        return sum(logged)
    if cpu_s is not None and p.energy.probe == "cpu" and p.energy.watts_per_core is not None:
        return cpu_s * p.energy.watts_per_core
    return None


def _energy(p: TrainingPlatform, device_j: float | None, duration_s: float,
            catalog: Catalog | None) -> EnergyResult:
    est = estimate_energy(p.energy, device_j=device_j, duration_s=duration_s,
                          chips=p.platform.chips, catalog=catalog, hardware=p.platform.hardware)
    return energy_outputs(est, correct=1, output_tokens=None, duration_s=duration_s,
                          load_label="one run to target")


# --- a platform --------------------------------------------------------------------------------

def _logs(spec: Training, p: TrainingPlatform, base_dir: Path,
          run_dir: Path | None) -> tuple[list[RunLog], str | None]:
    if p.logs is not None:
        out, empty = [], []
        for r in log_runs(p.logs, base_dir):
            log = read_log(base_dir / r.path, p.logs.format, p.logs.columns, seed=r.seed,
                           trace_format=r.trace_format, units=r.units,
                           traces=rank_traces(r, base_dir))
            why = no_data(log, base_dir / r.path)
            if why is None:
                out.append(log)
            elif not r.optional:
                empty.append(f"no data in {r.path}: {why}")
        # No data is not "never reached the target": the platform is not measured.
        return (out, None) if not empty else ([], "; ".join(empty))
    if run_dir is None:
        return [], "not run: no run folder to read its logs from"
    ex = read_execution(run_dir)
    done = ex.platforms.get(p.name) if ex is not None else None
    if done is None:
        return [], "not run (the run ended before it)"
    if done.status == "skipped":
        return [], done.detail
    fmt = p.command.format if p.command is not None else "jsonl"
    cols = p.command.columns if p.command is not None else None
    out = []
    for i in range(spec.runs):
        path = run_log_path(run_dir, p.name, i)
        if p.command is not None:
            path = path.with_name(f"steps.{fmt}")
        if not path.exists():
            continue
        # Every rank's trace (the built-in workload); trace.json.gz: a command's, or an
        # older run's rank 0.
        traced = sorted(path.parent.glob("trace-rank*.json.gz"),
                        key=lambda f: int(f.name.removeprefix("trace-rank").split(".")[0]))
        single = path.parent / "trace.json.gz"
        traces = [str(f) for f in traced] or ([str(single)] if single.exists() else [])
        out.append(read_log(path, fmt, cols or Columns(), seed=spec.seed + i,
                            traces=traces))
    failure = None
    if done.status != "ok":
        last = done.output_tail.strip().splitlines()[-1:] if done.output_tail else []
        failure = f"{done.detail or done.status}" + (f": {last[0][-300:]}" if last else "")
    if not out and failure is None:
        failure = "the command wrote no log"
    return out, failure


def _builtin_shape(model: str) -> ModelShape:
    """FLOPs-relevant size of the built-in workload's model, from its config.json."""
    art = resolve_model(model)
    assert art.hf_dir is not None
    c = json.loads((art.hf_dir / "config.json").read_text())
    h, layers, inter, v = (int(c["hidden_size"]), int(c["num_hidden_layers"]),
                           int(c["intermediate_size"]), int(c["vocab_size"]))
    heads, kv = int(c["num_attention_heads"]), int(c.get("num_key_value_heads") or
                                                   c["num_attention_heads"])
    hd = int(c.get("head_dim") or h // heads)
    per_layer = h * heads * hd * 2 + h * kv * hd * 2 + 3 * h * inter + 2 * h
    params = layers * per_layer + h + v * h   # the LM head counts; the input embedding not
    return ModelShape(params=params, layers=layers, heads=heads, head_dim=hd, seq_len=13)


def _mfu(p: TrainingPlatform, runs: list[RunLog], catalog: Catalog | None,
         host_fp32_tflops: float | None = None) -> MfuResult:
    precision = p.platform.precision or (p.builtin.precision if p.builtin else None)
    shape = _builtin_shape(p.builtin.model) if p.builtin is not None else p.model
    if shape is None:
        return MfuResult(status="not assessed", reason="the model's size is not declared "
                         "(training.platforms[].model.params)", precision=precision)
    steps = [s for r in runs for s in m.preserved_steps(r, m.restarts(r))]
    tps = m.tokens_per_s(steps)
    fpt = m.flops_per_token(shape.params, layers=shape.layers, heads=shape.heads,
                            head_dim=shape.head_dim, seq_len=shape.seq_len)
    peak, source = _peak(p, precision, catalog)
    if peak is None and p.builtin is not None and precision == "fp32" and host_fp32_tflops:
        # The built-in workload ran on this host, whose fp32 peak the run measured.
        peak = host_fp32_tflops
        source = ("this host's fp32 peak, measured before the load (numpy matmul "
                  "micro-benchmark, run log host): measured, not a datasheet figure")
    if tps is None:
        return MfuResult(status="not assessed", reason="the logs give no tokens and step "
                         "times", flops_per_token=fpt, precision=precision)
    if peak is None:
        return MfuResult(status="not assessed", reason=source, flops_per_token=fpt,
                         tokens_per_s=tps, precision=precision)
    value = m.mfu(fpt, tps, peak * 1e12, p.platform.chips)
    hfu = None
    if p.recompute:
        hfu = m.mfu(m.flops_per_token(shape.params, layers=shape.layers, heads=shape.heads,
                                      head_dim=shape.head_dim, seq_len=shape.seq_len,
                                      recompute=True), tps, peak * 1e12, p.platform.chips)
    flag = _implausible(value, hfu, source)
    return MfuResult(status="assessed", reason="", mfu=value, hfu=hfu, flops_per_token=fpt,
                     tokens_per_s=tps, peak_tflops=peak, peak_source=source,
                     precision=precision, plausible=not flag, flag=flag)


def _implausible(mfu: float, hfu: float | None, peak_source: str) -> str:
    """Why a utilisation above 100 % cannot be true, with its likely cause ('' when it is
    plausible): the throughput is above what the peak allows, so the peak or the FLOP count
    is wrong."""
    worst = max(mfu, hfu or 0.0)
    if worst <= 1.0:
        return ""
    cause = ("this host's peak was measured by a micro-benchmark, likely on a loaded machine "
             "(it reads low)" if peak_source.startswith("this host") else
             "the peak is too low for this chip and precision (catalog or declared "
             "peak_tflops)")
    which = "MFU" if mfu >= worst else "HFU"
    return (f"implausible: {which} {worst * 100:.0f} % is above 100 % "
            f"(the measured tokens/s exceed the peak's upper bound); likely cause: {cause}, "
            "or a wrong FLOP count per token (model.params, layers, seq_len); not used for "
            "any comparison")


def _peak(p: TrainingPlatform, precision: str | None,
          catalog: Catalog | None) -> tuple[float | None, str]:
    if p.peak_tflops is not None:
        return p.peak_tflops, "declared peak_tflops (study file, an assumption)"
    hw = p.platform.hardware
    chip = catalog.chip(hw) if catalog is not None else None
    if chip is None:
        return None, (f"no catalog entry for hardware '{hw}' and no declared peak_tflops"
                      if hw else "no platform.hardware and no declared peak_tflops")
    fact_name = _PEAK_FIELD.get(precision or "")
    fact = getattr(chip, fact_name) if fact_name else None
    if fact is None:
        have = [k.removeprefix("peak_") for k in ("peak_bf16", "peak_fp8")
                if getattr(chip, k) is not None]
        return None, (f"the catalog has no {precision or 'undeclared-precision'} peak for "
                      f"{hw} (it lists: {', '.join(have) or 'none'}); declare peak_tflops")
    dated = f", {fact.date}" if fact.date else ""
    return float(fact.value), f"catalog peak_{precision} of {hw} ({fact.source}{dated})"


def _cost(p: TrainingPlatform, score: TimeToTargetResult, runs: list[TrainingRunResult],
          study_costs: StudyCosts, catalog: Catalog | None) -> TrainingCostResult | None:
    if p.price is None or score.value_s is None:
        return None
    scored = [runs[i] for i in score.scored if i < len(runs)]
    energy = _energy(p, _device_to_target(scored), score.value_s, catalog)

    def bill(duration: float) -> BillResult:
        measured = Measured(duration_s=duration, requests=1, correct=1,
                            energy_j=energy.joules, energy_level=energy.level,
                            energy_origin=energy.origin or "measured")
        ci = build_cost_inputs(p.name, chips=p.platform.chips, price=p.price,  # type: ignore[arg-type]
                               measured_values=measured, costs=p.costs,
                               study_costs=study_costs, catalog=catalog,
                               hardware=p.platform.hardware, load_label="one run to target")
        return compute_bill(ci)

    b = bill(score.value_s)
    interval = None
    if score.min_s is not None and score.max_s is not None:
        # The run-to-run spread: every converged run's time, not only the scored ones.
        interval = (bill(score.min_s).total_usd, bill(score.max_s).total_usd)
    rate = b.inputs.get("usd_per_chip_hour")
    util = b.inputs.get("utilization")
    ck = [r.restarts.checkpoint_save_s for r in scored]
    ck_usd = None
    if rate is not None and rate.value is not None and ck:
        ck_usd = (sum(ck) / len(ck)) / 3600.0 * rate.value * p.platform.chips / (
            util.value if util is not None and util.value else 1.0)
    energy_result = energy if energy.joules is not None else None
    return TrainingCostResult(bill=b, cost_per_run_usd=b.total_usd, interval_usd=interval,
                              checkpoint_usd_per_run=ck_usd, energy=energy_result)


def _device_to_target(scored: list[TrainingRunResult]) -> float | None:
    """Mean over the scored runs of each run's device energy up to its time to target (its
    energy x time to target / wall time, when it went on past the target)."""
    vals = [r.device_energy_j * min(1.0, (r.time_to_target_s or 0.0) / r.wall_s)
            for r in scored if r.device_energy_j is not None and r.wall_s]
    return sum(vals) / len(vals) if vals else None


_TRACE_SOURCES = {
    "neuron-system": "Neuron profiler JSON (system profile): nc_exec_running and cc_running "
                     "hardware events of one NeuronCore, HTA definitions",
    "neuron-device": "Neuron profiler JSON (device profile): engine and CC-core instructions "
                     "of one graph execution, HTA definitions",
}


def _provenance(p: TrainingPlatform, mfu: MfuResult,
                comm_kind: str | None = None, *, mllog: bool = False) -> dict[str, str]:
    src = {"logs": "ingested logs", "builtin": "measured by the built-in workload",
           "command": "logs written by the study's command"}[_kind(p)]
    energy = ("estimated: ranks' CPU time x energy.watts_per_core" if p.energy.probe == "cpu"
              else "energy events in the log, else TDP x time (estimated)")
    return {
        "time to target": (f"{src}: MLPerf run_stop - run_start of runs whose status is "
                           "success and that reached the target, MLPerf olympic scoring"
                           if mllog else f"{src}: first evaluation at the target, MLPerf "
                           "olympic scoring"),
        "stability, restarts, goodput": f"{src}: step and event lines",
        "compute vs communication": _TRACE_SOURCES.get(
            comm_kind or "", "profiler trace (Kineto JSON), HTA definitions on its events"),
        "cost": "the inference bill: price and costs from the study file, duration = time "
                "to target",
        "energy": energy,
        "MFU": (f"FLOPs/token 6N+12LHQT vs {mfu.peak_source}" if mfu.status == "assessed"
                else f"not assessed: {mfu.reason}"),
    }


def _kind(p: TrainingPlatform) -> str:
    return "logs" if p.logs is not None else "builtin" if p.builtin is not None else "command"


def _score(runs: list[TrainingRunResult], rule: BenchmarkRule | None) -> TimeToTargetResult:
    sc = m.mlperf_score([r.time_to_target_s if r.reached else None for r in runs], rule=rule)
    inits = [r.init_s for r in runs if r.init_s is not None]
    return TimeToTargetResult(
        value_s=sc.value_s, valid=sc.valid, reason=sc.reason, runs=sc.runs,
        converged=sc.converged, scored=list(sc.scored), dropped=list(sc.dropped),
        min_s=sc.min_s, max_s=sc.max_s, stdev_s=sc.stdev_s, window_s=sc.window,
        rule=(rule.text if rule is not None else "at least 3 runs, drop the fastest and the "
              "slowest, at most 1 not converged (MLPerf's default rule)"),
        benchmark=rule.benchmark if rule else None,
        result_files=rule.result_files if rule else None,
        max_dropped=rule.max_dropped if rule else 1,
        init_mean_s=sum(inits) / len(inits) if inits else None)


def platform_result(spec: Training, p: TrainingPlatform, *, base_dir: Path,
                    run_dir: Path | None, study_costs: StudyCosts,
                    catalog: Catalog | None,
                    host_fp32_tflops: float | None = None) -> PlatformTrainingResult:
    out = PlatformTrainingResult(name=p.name, source=_kind(p),
                                 platform=p.platform.model_dump(mode="json"))
    try:
        logs, failure = _logs(spec, p, base_dir, run_dir)
    except (AccevalError, OSError) as exc:
        logs, failure = [], str(exc)
    out.failure = failure
    if not logs:
        out.failure = failure or "no run log"
        return out
    tgt = resolve(spec.target, logs)
    out.target_source, out.target_note = tgt.source, tgt.note
    if tgt.target is None:
        out.failure = tgt.failure
        return out
    out.target = tgt.target.text
    if tgt.failure:
        out.failure = tgt.failure
    out.runs = [_run_result(p, i, log, tgt.target, spec, catalog) for i, log in enumerate(logs)]
    mlperf = all(log.mlperf is not None for log in logs)
    out.time_to_target = _score(out.runs, tgt.rule if mlperf else None)
    out.compute_comm = compute_comm(logs)
    out.mfu = _mfu(p, logs, catalog, host_fp32_tflops)
    out.cost = _cost(p, out.time_to_target, out.runs, study_costs, catalog)
    out.provenance = _provenance(p, out.mfu,
                                 out.compute_comm.kind if out.compute_comm else None,
                                 mllog=mlperf)
    return out


def training_section(spec: Training, *, base_dir: Path, run_dir: Path | None,
                     study_costs: StudyCosts, catalog: Catalog | None,
                     host_fp32_tflops: float | None = None) -> TrainingResult:
    """Every training number of a run, from its stored logs (the verdict is added by
    ``analyze``). ``host_fp32_tflops``: this host's measured fp32 peak (the run log's host
    micro-benchmark), the MFU peak of a built-in fp32 platform with no catalog peak."""
    declared = spec.target
    res = TrainingResult(target=declared.text if declared else "each benchmark's MLPerf target",
                         metric=declared.metric if declared else "per benchmark",
                         threshold=declared.threshold if declared else None,
                         runs_per_platform=spec.runs,
                         spike_z=spec.spike_z, spike_window=spec.spike_window)
    res.platforms = [platform_result(spec, p, base_dir=base_dir, run_dir=run_dir,
                                     study_costs=study_costs, catalog=catalog,
                                     host_fp32_tflops=host_fp32_tflops)
                     for p in spec.platforms]
    for pr in res.platforms:
        if pr.failure and pr.failure.startswith("skipped"):
            res.notes.append(f"{pr.name}: {pr.failure}")
        if pr.target_note:
            res.notes.append(f"{pr.name}: {pr.target_note}")
    return res


__all__ = ["platform_result", "training_section"]
