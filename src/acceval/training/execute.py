"""Running the training platforms that are commands: the built-in workload, or the user's
own script, each run writing its step log into the run folder.

Layout: ``<run>/training/<platform>/run-<i>/steps.jsonl`` (and ``trace-rank<r>.json.gz``), with
``<run>/training/execution.json`` saying what ran, how it ended and what it printed last.
Nothing is computed here: :mod:`acceval.training.analyze` reads these files, so
``acceval report --recompute`` gives the same numbers.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import Field

from acceval.results.files import write_text_durable
from acceval.results.section import Section
from acceval.training.spec import Builtin, Command, Training, TrainingPlatform

TRAINING_DIR = "training"
EXECUTION_FILE = "execution.json"
_TAIL = 2000


class PlatformExecution(Section):
    status: str                         # "ok", "failed", "skipped"
    detail: str = ""
    argv: list[str] = Field(default_factory=list)
    returncode: int | None = None
    wall_s: float | None = None
    output_tail: str = ""


class Execution(Section):
    platforms: dict[str, PlatformExecution] = Field(default_factory=dict)


def platform_dir(run_dir: Path, name: str) -> Path:
    return run_dir / TRAINING_DIR / name


def run_log_path(run_dir: Path, name: str, index: int) -> Path:
    return platform_dir(run_dir, name) / f"run-{index}" / "steps.jsonl"


def read_execution(run_dir: Path) -> Execution | None:
    path = run_dir / TRAINING_DIR / EXECUTION_FILE
    if not path.exists():
        return None
    try:
        return Execution.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError:
        return None


def torch_missing() -> str | None:
    """Why the built-in workload cannot run here (None: it can)."""
    for module in ("torch", "transformers"):
        if importlib.util.find_spec(module) is None:
            return (f"skipped: the built-in training workload needs the '{module}' package "
                    "(pip install 'acceval[torch]')")
    return None


def workload_config(spec: Training, p: TrainingPlatform, b: Builtin, out: Path) -> dict[str, Any]:
    kill = b.kill.model_dump() if b.kill is not None else None
    target = spec.target
    assert target is not None  # the spec requires one for a built-in platform
    return {
        "out": str(out), "runs": spec.runs, "seed": spec.seed, "model": b.model,
        "processes": b.processes, "device": b.device, "precision": b.precision,
        "global_batch": b.global_batch, "max_steps": b.max_steps, "lr": b.lr,
        "eval_every": b.eval_every, "eval_sequences": b.eval_sequences,
        "checkpoint_every": b.checkpoint_every,
        "profile_steps": list(b.profile_steps) if b.profile_steps else None,
        "kill": kill, "threads": b.threads,
        "stop_loss": target.max_eval_loss, "stop_accuracy": target.min_accuracy,
    }


def _tail(text: str) -> str:
    return text[-_TAIL:]


def _run(argv: list[str], *, cwd: Path, timeout_s: float, log: Path,
         env_extra: dict[str, str] | None = None) -> PlatformExecution:
    t = time.perf_counter()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           **(env_extra or {})}
    try:
        with log.open("w", encoding="utf-8") as out:
            proc = subprocess.run(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                  timeout=timeout_s, env=env, check=False)
    except subprocess.TimeoutExpired:
        return PlatformExecution(status="failed", detail=f"timed out after {timeout_s:g} s",
                                 argv=argv, wall_s=time.perf_counter() - t,
                                 output_tail=_tail(log.read_text(errors="replace")))
    except OSError as exc:
        return PlatformExecution(status="failed", detail=f"could not start: {exc}", argv=argv)
    wall = time.perf_counter() - t
    text = log.read_text(errors="replace")
    ok = proc.returncode == 0
    return PlatformExecution(status="ok" if ok else "failed",
                             detail="" if ok else f"exit code {proc.returncode}",
                             argv=argv, returncode=proc.returncode, wall_s=wall,
                             output_tail=_tail(text))


def _builtin(spec: Training, platforms: list[TrainingPlatform],
             run_dir: Path) -> dict[str, PlatformExecution]:
    """Every built-in platform in one workload process (torch is imported once)."""
    missing = torch_missing()
    if missing is not None:
        return {p.name: PlatformExecution(status="skipped", detail=missing) for p in platforms}
    root = run_dir / TRAINING_DIR
    jobs = []
    for p in platforms:
        assert p.builtin is not None
        pdir = platform_dir(run_dir, p.name)
        pdir.mkdir(parents=True, exist_ok=True)
        (pdir / "status.json").unlink(missing_ok=True)
        jobs.append(workload_config(spec, p, p.builtin, pdir))
    cfg = root / "workload.json"
    cfg.write_text(json.dumps({"jobs": jobs}, indent=2), encoding="utf-8")
    argv = [sys.executable, "-m", "acceval.training.workload", str(cfg)]
    budget = 60.0 + sum(spec.runs * p.builtin.max_steps * 5.0 for p in platforms
                        if p.builtin is not None)
    # The workload must import this very acceval, wherever it was imported from.
    here = str(Path(__file__).resolve().parents[2])
    path = os.pathsep.join([here, *filter(None, [os.environ.get("PYTHONPATH")])])
    ran = _run(argv, cwd=root, timeout_s=budget, log=root / "workload.log",
               env_extra={"PYTHONPATH": path})
    out: dict[str, PlatformExecution] = {}
    for p in platforms:
        status = platform_dir(run_dir, p.name) / "status.json"
        if status.exists():
            st = json.loads(status.read_text())
            out[p.name] = ran.model_copy(update={"status": st["status"],
                                                 "detail": st["detail"] or ran.detail,
                                                 "wall_s": st["wall_s"]})
        else:
            out[p.name] = ran.model_copy(update={"status": "failed",
                                                 "detail": ran.detail or "did not run"})
    return out


def _command(spec: Training, p: TrainingPlatform, c: Command, run_dir: Path,
             base_dir: Path) -> PlatformExecution:
    out = platform_dir(run_dir, p.name)
    last = PlatformExecution(status="ok")
    for i in range(spec.runs):
        rdir = out / f"run-{i}"
        rdir.mkdir(parents=True, exist_ok=True)
        subst = {"log": str(rdir / f"steps.{c.format}"), "trace": str(rdir / "trace.json.gz"),
                 "seed": str(spec.seed + i), "run": str(i), "dir": str(rdir)}
        argv = [a.format(**subst) for a in c.argv]
        last = _run(argv, cwd=base_dir, timeout_s=c.timeout_s, log=rdir / "output.log")
        if last.status != "ok":
            last.detail = f"run {i}: {last.detail}"
            return last
    return last


def run_training(spec: Training, run_dir: Path, base_dir: Path, *,
                 echo: Any = None) -> Execution:
    """Run every platform that is a command (logs are only read later); keeps going when one
    fails, and writes ``execution.json``."""
    # The workload and commands run in other folders: relative paths would not reach back.
    run_dir, base_dir = Path(run_dir).resolve(), Path(base_dir).resolve()
    done = read_execution(run_dir) or Execution()

    def pending(p: TrainingPlatform) -> bool:
        # Logs are only read later; a platform that finished in an earlier session stays.
        return p.logs is None and done.platforms.get(
            p.name, PlatformExecution(status="")).status != "ok"

    def save() -> None:
        write_text_durable(run_dir / TRAINING_DIR / EXECUTION_FILE,
                           done.model_dump_json(indent=2))

    builtin = [p for p in spec.platforms if p.builtin is not None and pending(p)]
    if builtin:
        if echo is not None:
            echo(f"training {', '.join(p.name for p in builtin)} ({spec.runs} runs each)")
        (run_dir / TRAINING_DIR).mkdir(parents=True, exist_ok=True)
        done.platforms.update(_builtin(spec, builtin, run_dir))
        save()
    for p in spec.platforms:
        if p.command is None or not pending(p):
            continue
        if echo is not None:
            echo(f"training {p.name} ({spec.runs} runs)")
        done.platforms[p.name] = _command(spec, p, p.command, run_dir, base_dir)
        save()
    return done


__all__ = ["EXECUTION_FILE", "TRAINING_DIR", "Execution", "PlatformExecution",
           "platform_dir", "read_execution", "run_log_path", "run_training", "torch_missing"]
