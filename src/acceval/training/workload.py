"""The built-in training workload: the shipped tiny model's architecture trained from a seeded
initialisation on the arithmetic task, data-parallel over N processes (torch.distributed:
gloo on CPU, NCCL on CUDA), so that real communication happens and is measured.

Run as ``python -m acceval.training.workload CONFIG.json`` (the ``[torch]`` extra; the config
lists one job per platform, run in turn by one interpreter). For each run it forks the ranks,
which write one JSONL step log (docs/training.md): a checkpoint every K steps, every step's
wall time, loss, gradient norm, tokens and data time, an evaluation every N steps (held-out
loss and exact match), and a profiler (Kineto) trace of a window of steps from every rank
(``trace-rank<r>.json.gz``).
The injected interruption SIGKILLs one rank at a step; this launcher sees the rank die, ends
the others, logs the interruption and restarts every rank from the last checkpoint.

The clock is ``time.perf_counter()``, which forked processes share on one host; every stamp
is seconds since the launcher started the run.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The arithmetic task the tiny model knows: '{a:03d}+{b:03d}={a+b:04d}</s>'.
_CHARS = "0123456789+="
_FIRST_CHAR_ID = 4      # after <pad>, <s>, </s>, <unk>
_EOS_ID = 2
_PROMPT_LEN = 8


def _is_heldout(a: int, b: int) -> bool:
    # The split the shipped model was trained with (tools/train_tiny.py).
    return ((a * 1000 + b) * 2654435761 % 2**32) % 20 == 0


def encode(a: int, b: int) -> list[int]:
    return [_FIRST_CHAR_ID + _CHARS.index(c) for c in f"{a:03d}+{b:03d}={a + b:04d}"] + [_EOS_ID]


@dataclass(slots=True)
class _Ctx:
    cfg: dict[str, Any]
    run: int
    seed: int
    attempt: int
    out: Path
    t0: float
    kill_step: int | None       # this attempt's rank to kill dies at this step
    kill_rank: int | None
    launched: float             # when the launcher forked this attempt's ranks


class _Log:
    """Append-only JSONL, one write per line (the launcher and rank 0 both append)."""

    def __init__(self, path: Path, t0: float) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.t0 = t0

    def write(self, **fields: Any) -> None:
        fields = {"t_s": round(time.perf_counter() - self.t0, 6), **fields}
        os.write(self.fd, (json.dumps(fields) + "\n").encode())

    def close(self) -> None:
        os.close(self.fd)


def _model_config(spec: str) -> Any:
    from transformers import LlamaConfig

    from acceval.models import resolve_model

    art = resolve_model(spec)
    if art.hf_dir is None:
        raise SystemExit(f"model {spec} has no config.json")
    raw = json.loads((art.hf_dir / "config.json").read_text())
    keep = {k: v for k, v in raw.items()
            if k not in ("architectures", "transformers_version", "dtype")}
    return LlamaConfig(**keep), art.root / "heldout.tsv"


def _eval_set(heldout: Path, n: int) -> list[list[int]]:
    rows = []
    for line in heldout.read_text().splitlines()[:n]:
        prompt = line.split("\t")[0]
        a, b = int(prompt[0:3]), int(prompt[4:7])
        rows.append(encode(a, b))
    return rows


def _batch(rng: Any, n: int) -> list[list[int]]:
    rows: list[list[int]] = []
    while len(rows) < n:
        a, b = (int(x) for x in rng.integers(0, 1000, 2))
        if not _is_heldout(a, b):
            rows.append(encode(a, b))
    return rows


def _rank_main(ctx: _Ctx, rank: int, world: int) -> None:
    import numpy as np
    import torch
    import torch.distributed as dist
    from transformers import LlamaForCausalLM

    cfg = ctx.cfg
    torch.set_num_threads(int(cfg["threads"]))
    cuda = cfg["device"] == "cuda"
    device = torch.device(f"cuda:{rank}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    store = ctx.out / f"store-{ctx.attempt}"
    dist.init_process_group("nccl" if cuda else "gloo", init_method=f"file://{store}",
                            rank=rank, world_size=world)
    log = _Log(ctx.out / "steps.jsonl", ctx.t0) if rank == 0 else None
    mconf, heldout = _model_config(cfg["model"])
    torch.manual_seed(ctx.seed)
    model: Any = LlamaForCausalLM(mconf)
    model = model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=0.01)
    ckpt = ctx.out / "checkpoint.pt"
    start_step, restore_s = 0, 0.0
    if ckpt.exists():
        t = time.perf_counter()
        state = torch.load(ckpt, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start_step = int(state["step"])
        restore_s = time.perf_counter() - t
        if log:
            log.write(event="checkpoint_restore", step=start_step,
                      duration_s=round(restore_s, 6))
    ddp: Any = model
    if world > 1:
        ddp = torch.nn.parallel.DistributedDataParallel(model)
    evals = torch.tensor(_eval_set(heldout, int(cfg["eval_sequences"])), device=device)
    shard = evals[rank::world]
    per_rank = max(1, int(cfg["global_batch"]) // world)
    warmup = 10
    autocast = (torch.autocast(device.type, dtype=torch.bfloat16)
                if cfg["precision"] == "bf16" else None)
    prof = None
    window: list[int] | None = cfg.get("profile_steps")
    if log:
        log.write(event="startup", step=start_step,
                  duration_s=round(time.perf_counter() - ctx.launched - restore_s, 6))
    for step in range(start_step + 1, int(cfg["max_steps"]) + 1):
        if ctx.kill_step == step and ctx.kill_rank == rank:
            os.kill(os.getpid(), signal.SIGKILL)
        # Every rank traces the same steps: ranks differ, and the slowest bounds the step.
        if window and ctx.run == 0 and ctx.attempt == 0 and step == window[0]:
            prof = _start_profiler(cuda)
        mark = _step_mark(step) if prof is not None else None
        t_step = time.perf_counter()
        rng = np.random.default_rng([ctx.seed, step, rank])  # a resumed step sees the same data
        x = torch.tensor(_batch(rng, per_rank), device=device)
        labels = x.clone()
        labels[:, :_PROMPT_LEN] = -100
        data_s = time.perf_counter() - t_step
        for g in opt.param_groups:
            g["lr"] = cfg["lr"] * min(1.0, step / warmup)
        if autocast is not None:
            with autocast:
                loss = ddp(input_ids=x, labels=labels).loss
        else:
            loss = ddp(input_ids=x, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        step_s = time.perf_counter() - t_step
        if mark is not None:
            mark.__exit__(None, None, None)
        if log:
            log.write(step=step, loss=float(loss.detach()), grad_norm=float(gnorm),
                      tokens=int(x.numel()) * world, step_s=round(step_s, 6),
                      data_s=round(data_s, 6))
        if prof is not None and window is not None and step == window[1]:
            prof.stop()
            prof.export_chrome_trace(str(ctx.out / f"trace-rank{rank}.json.gz"))
            prof = None
        if step % int(cfg["eval_every"]) == 0:
            ev_loss, ev_acc = _evaluate(model, shard, dist, device)
            if log:
                log.write(step=step, eval_loss=ev_loss, eval_accuracy=ev_acc)
            if _reached(cfg, ev_loss, ev_acc):
                break
        if step % int(cfg["checkpoint_every"]) == 0 and rank == 0:
            t = time.perf_counter()
            tmp = ckpt.with_suffix(".tmp")
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step},
                       tmp)
            os.replace(tmp, ckpt)
            if log:
                log.write(event="checkpoint_save", step=step,
                          duration_s=round(time.perf_counter() - t, 6))
    dist.barrier()
    if log:
        log.close()
    # Leave without running destructors: a process group torn down after its peer has gone
    # can wait for it forever.
    os._exit(0)


def _reached(cfg: dict[str, Any], ev_loss: float, ev_acc: float) -> bool:
    """MLPerf stops a run at the first evaluation that reaches the target."""
    if cfg.get("stop_loss") is not None:
        return ev_loss <= float(cfg["stop_loss"])
    if cfg.get("stop_accuracy") is not None:
        return ev_acc >= float(cfg["stop_accuracy"])
    return False


def _step_mark(step: int) -> Any:
    """The ``ProfilerStep#N`` annotation a profiler schedule would add, around one step."""
    from torch.profiler import record_function

    mark: Any = record_function(f"ProfilerStep#{step}")
    mark.__enter__()
    return mark


def _start_profiler(cuda: bool) -> Any:
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    prof = profile(activities=acts)
    prof.start()
    return prof


def _evaluate(model: Any, shard: Any, dist: Any, device: Any) -> tuple[float, float]:
    """Held-out loss on the answer tokens and exact match (teacher-forced: every answer
    position's argmax right, which is what greedy decoding would produce), summed over ranks."""
    import torch

    model.eval()
    with torch.no_grad():
        logits = model(input_ids=shard).logits[:, _PROMPT_LEN - 1:-1, :]
        target = shard[:, _PROMPT_LEN:]
        nll = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]).float(), target.reshape(-1), reduction="sum")
        right = (logits.argmax(-1) == target).all(dim=1).sum()
        tot = torch.tensor([float(nll), float(right), float(target.numel()),
                            float(shard.shape[0])], device=device)
    model.train()
    dist.all_reduce(tot)
    return float(tot[0] / tot[2]), float(tot[1] / tot[3])


def _run_once(cfg: dict[str, Any], run: int, out: Path, t0: float, attempt: int,
              kill: dict[str, Any] | None) -> bool:
    """Fork the ranks of one attempt and wait; False when a rank died."""
    import multiprocessing as mp

    world = int(cfg["processes"])
    ctx = _Ctx(cfg, run, int(cfg["seed"]) + run, attempt, out, t0,
               kill["at_step"] if kill else None, kill["rank"] if kill else None,
               time.perf_counter())
    fork = mp.get_context("fork")
    procs = [fork.Process(target=_rank_main, args=(ctx, r, world), daemon=True)
             for r in range(world)]
    for p in procs:
        p.start()
    while True:
        codes = [p.exitcode for p in procs]
        if any(c not in (None, 0) for c in codes):
            for p in procs:
                if p.exitcode is None:
                    p.kill()
            for p in procs:
                p.join()
            return False
        if all(c == 0 for c in codes):
            return True
        time.sleep(0.01)


def _job(cfg: dict[str, Any]) -> int:
    root = Path(cfg["out"])
    for run in range(int(cfg["runs"])):
        out = root / f"run-{run}"
        out.mkdir(parents=True, exist_ok=True)
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        log = _Log(out / "steps.jsonl", t0)
        log.write(event="run_start", detail=f"seed {int(cfg['seed']) + run}")
        kill = cfg.get("kill")
        kill = kill if kill and kill["run"] == run else None
        attempt = 0
        while not _run_once(cfg, run, out, t0, attempt, kill if attempt == 0 else None):
            log.write(event="interruption",
                      detail=f"rank {kill['rank'] if kill else '?'} died (SIGKILL) at step "
                      f"{kill['at_step'] if kill else '?'}; the other ranks were ended")
            attempt += 1
            if attempt > 3:
                log.write(event="run_end", detail="gave up after 3 restarts")
                return 1
            log.write(event="restart", detail=f"attempt {attempt} from the last checkpoint")
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
        log.write(event="run_end", value=round(cpu_s, 4), detail="value: CPU seconds of the "
                  "ranks")
        log.close()
        for stale in out.glob("store-*"):
            stale.unlink(missing_ok=True)
        (out / "checkpoint.pt").unlink(missing_ok=True)
    return 0


def main(argv: list[str]) -> int:
    """Run every job of the config (one per platform) in turn; each job's ``status.json``
    says how it ended, so one failing platform does not hide the others."""
    jobs = json.loads(Path(argv[0]).read_text())["jobs"]
    # Imported once here: the forked ranks inherit them instead of importing each time.
    import torch
    import torch.distributed
    import torch.profiler
    from transformers import LlamaConfig, LlamaForCausalLM  # noqa: F401

    worst = 0
    for cfg in jobs:
        torch.set_num_threads(int(cfg["threads"]))
        t = time.perf_counter()
        try:
            code, detail = _job(cfg), ""
        except Exception as exc:  # one platform's failure is reported, the others still run
            code, detail = 1, f"{type(exc).__name__}: {exc}"
        status = {"status": "ok" if code == 0 else "failed", "detail": detail,
                  "wall_s": round(time.perf_counter() - t, 3)}
        (Path(cfg["out"]) / "status.json").write_text(json.dumps(status))
        worst = max(worst, code)
    return worst


if __name__ == "__main__":  # pragma: no cover - run by the training executor
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main(sys.argv[1:]))
