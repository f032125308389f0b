"""Operations that ran on another processor than the accelerator, read from real tool output.

Three formats, each a pure parser over text or parsed JSON (the caller reads the file):

- a PyTorch profiler Chrome trace (``torch.profiler.profile(...).export_chrome_trace``):
  ``cpu_op`` events carry ``args["External id"]``; GPU ``kernel``/``gpu_memcpy``/``gpu_memset``
  events and the ``cuda_runtime`` calls that launched them carry the same ``External id``.
  A leaf ``aten::`` op that launched no device work while the model otherwise ran on the
  accelerator ran on the CPU. Device-host copies are counted as transfers.
- ONNX Runtime's verbose session log (``SessionOptions.log_severity_level = 0``): the
  ``Node placements`` block (``Node(s) placed on [EP]. Number of nodes: N`` then one
  ``OpType (node name)`` line per node, or ``All nodes placed on [EP]``) and the
  ``kernel not found in registries for Op type`` lines.
- Neuron: the ``torch_neuronx.analyze()`` / ``neuron_parallel_compile --command analyze`` JSON
  report (``unsupported_operators.aten[] = {kind, failureAt, call}``, ``support_percentage``)
  and compiler/partitioner log lines naming an ``aten::`` op with "not supported" or a CPU
  placement. ``torch_neuronx.trace`` has no automatic CPU fallback: an unsupported op there is
  a compile failure, or a CPU island when the graph partitioner is used (each island adds
  host-device transfers).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, computed_field

from acceval.errors import UsageError
from acceval.results.section import Section

FallbackFormat = Literal["torch_trace", "ort_log", "neuron"]

# Ops that only create views or metadata: they never launch device work, wherever they run.
_NO_WORK_OPS = frozenset({
    "aten::empty", "aten::empty_strided", "aten::empty_like", "aten::view", "aten::reshape",
    "aten::_reshape_alias", "aten::_unsafe_view", "aten::as_strided", "aten::t",
    "aten::transpose", "aten::permute", "aten::expand", "aten::expand_as", "aten::unsqueeze",
    "aten::squeeze", "aten::slice", "aten::select", "aten::detach", "aten::detach_",
    "aten::alias", "aten::resolve_conj", "aten::resolve_neg", "aten::lift_fresh", "aten::size",
    "aten::stride", "aten::numel", "aten::dim", "aten::split", "aten::chunk", "aten::narrow",
    "aten::split_with_sizes", "aten::unbind", "aten::result_type", "aten::set_",
    "aten::contiguous", "aten::view_as", "aten::unflatten", "aten::flatten",
    "aten::_has_compatible_shallow_copy_type", "aten::is_same_size", "aten::dropout",
})
_DEVICE_CATS = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
_LAUNCH_CATS = frozenset({"cuda_runtime", "cuda_driver"})


class FallbackOp(Section):
    """One operation type that ran on another processor, with how often and how long."""

    op: str
    where: str                       # "CPU" or the execution provider, e.g. CPUExecutionProvider
    count: int
    time_us: float | None = None     # total time in it (profiler traces only)
    detail: str | None = None        # node names or the call site


class FallbackReport(Section):
    source: FallbackFormat
    path: str | None
    accelerator: str | None          # what the model was placed on, None when none was seen
    ops: list[FallbackOp] = Field(default_factory=list)
    placements: dict[str, int] = Field(default_factory=dict)  # processor/EP -> ops or nodes
    transfers: int | None = None     # host<->device copies seen; None when not observable
    support_percentage: float | None = None  # Neuron analyze: share of supported HLO
    notes: list[str] = Field(default_factory=list)

    @property
    def accelerator_seen(self) -> bool:
        return self.accelerator is not None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fallback_count(self) -> int:
        return sum(o.count for o in self.ops)


# --- PyTorch profiler ------------------------------------------------------------------------

def _ext_id(ev: dict[str, Any]) -> Any:
    args = ev.get("args")
    return args.get("External id") if isinstance(args, dict) else None


def _leaves(ops: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """cpu_op events with no other cpu_op nested inside them on the same thread."""
    by_thread: dict[tuple[Any, Any], list[dict[str, Any]]] = defaultdict(list)
    for e in ops:
        by_thread[(e.get("pid"), e.get("tid"))].append(e)
    leaves: list[dict[str, Any]] = []
    for evs in by_thread.values():
        evs.sort(key=lambda e: (float(e["ts"]), -float(e.get("dur", 0.0))))
        has_child: set[int] = set()
        stack: list[tuple[float, int]] = []  # (end, index)
        for i, e in enumerate(evs):
            ts = float(e["ts"])
            while stack and stack[-1][0] <= ts:
                stack.pop()
            if stack:
                has_child.add(stack[-1][1])
            stack.append((ts + float(e.get("dur", 0.0)), i))
        leaves.extend(e for i, e in enumerate(evs) if i not in has_child)
    return leaves


def _launched(leaf: dict[str, Any], device_ext: set[Any],
              launches: dict[tuple[Any, Any], list[float]]) -> bool:
    if _ext_id(leaf) in device_ext:
        return True
    start = float(leaf["ts"])
    end = start + float(leaf.get("dur", 0.0))
    return any(start <= t <= end for t in launches.get((leaf.get("pid"), leaf.get("tid")), ()))


def parse_torch_trace(trace: dict[str, Any] | list[Any], path: str | None = None
                      ) -> FallbackReport:
    """Find ``aten::`` ops that ran on the CPU while the model ran on an accelerator."""
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        raise UsageError(f"{path or 'trace'}: not a Chrome trace (no traceEvents list)")
    evs = [e for e in events if isinstance(e, dict) and e.get("ph") == "X"]
    ops = [e for e in evs if e.get("cat") == "cpu_op" and "ts" in e]
    device = [e for e in evs if e.get("cat") in _DEVICE_CATS]
    device_ext = {_ext_id(e) for e in evs
                  if e.get("cat") in _DEVICE_CATS | _LAUNCH_CATS and _ext_id(e) is not None}
    launches: dict[tuple[Any, Any], list[float]] = defaultdict(list)
    for e in evs:
        if e.get("cat") in _LAUNCH_CATS:
            launches[(e.get("pid"), e.get("tid"))].append(float(e["ts"]))
    # View/metadata ops are dropped first, so an op whose only children are views is a leaf.
    work = _leaves([e for e in ops if e.get("name") not in _NO_WORK_OPS])
    copies = sum(1 for e in device if e.get("cat") == "gpu_memcpy")
    if not device:
        return FallbackReport(
            source="torch_trace", path=path, accelerator=None, placements={"CPU": len(work)},
            transfers=None,
            notes=(f"no accelerator activity in the trace ({len(ops)} cpu_op events, no "
                   "kernel/gpu_memcpy events): the model ran on the CPU, so nothing fell "
                   "back; profile with ProfilerActivity.CUDA on the accelerator to check",),
        )
    props = trace.get("deviceProperties") if isinstance(trace, dict) else None
    names = [str(p.get("name")) for p in props or [] if isinstance(p, dict) and p.get("name")]
    accelerator = names[0] if names else "cuda"
    on_cpu = [e for e in work if not _launched(e, device_ext, launches)]
    counts: Counter[str] = Counter()
    time_us: dict[str, float] = defaultdict(float)
    for e in on_cpu:
        counts[str(e["name"])] += 1
        time_us[str(e["name"])] += float(e.get("dur", 0.0))
    fall = tuple(FallbackOp(op=name, where="CPU", count=n, time_us=round(time_us[name], 3))
                 for name, n in sorted(counts.items(), key=lambda kv: -time_us[kv[0]]))
    return FallbackReport(
        source="torch_trace", path=path, accelerator=accelerator, ops=fall,
        placements={"accelerator": len(work) - len(on_cpu), "CPU": len(on_cpu)},
        transfers=copies,
        notes=("leaf aten ops that launched no kernel, memcpy or memset; view/metadata ops "
               "excluded",),
    )


# --- ONNX Runtime ----------------------------------------------------------------------------

_ORT_PLACED = re.compile(r"(Node\(s\)|All nodes) placed on \[(\w+)\]\. Number of nodes: (\d+)")
_ORT_NODE = re.compile(r"VerifyEachNodeIsAssignedToAnEp\]\s{3}(\S+) \((.*)\)\s*$")
_ORT_NOKERNEL = re.compile(r"(\w+) kernel not found in registries for Op type: (\w+)"
                           r"(?: node name: (\S+))?")
_ORT_COPY = re.compile(r"Add Memcpy(ToHost|FromHost) ")
_CPU_EP = "CPUExecutionProvider"


def parse_ort_log(text: str, path: str | None = None) -> FallbackReport:
    """Node placement per execution provider from an ONNX Runtime verbose log."""
    placements: dict[str, int] = {}
    nodes: dict[str, list[tuple[str, str]]] = defaultdict(list)
    current: str | None = None
    copies = 0
    notes: list[str] = []
    for line in text.splitlines():
        m = _ORT_PLACED.search(line)
        if m:
            current = m.group(2)
            placements[current] = placements.get(current, 0) + int(m.group(3))
            continue
        n = _ORT_NODE.search(line)
        if n and current is not None:
            nodes[current].append((n.group(1), n.group(2)))
            continue
        current = None if "VerifyEachNodeIsAssignedToAnEp" not in line else current
        k = _ORT_NOKERNEL.search(line)
        if k:
            notes.append(f"{k.group(1)} has no kernel for {k.group(2)}"
                         + (f" ({k.group(3)})" if k.group(3) else ""))
        if _ORT_COPY.search(line):
            copies += 1
    if not placements:
        raise UsageError(f"{path or 'log'}: no 'Node placements' block; run the session with "
                         "SessionOptions.log_severity_level = 0 (verbose) and keep its stderr")
    accel = [ep for ep in placements if ep != _CPU_EP]
    if not accel:
        return FallbackReport(source="ort_log", path=path, accelerator=None, placements=placements,
                              transfers=copies,
                              notes=(*notes, "every node is on CPUExecutionProvider: no "
                                     "accelerator provider was used, so nothing fell back"))
    by_type: dict[str, list[str]] = defaultdict(list)
    for op, name in nodes.get(_CPU_EP, []):
        by_type[op].append(name)
    ops = tuple(FallbackOp(op=op, where=_CPU_EP, count=len(names), time_us=None,
                           detail=", ".join(names))
                for op, names in sorted(by_type.items()))
    listed = sum(o.count for o in ops)
    if placements.get(_CPU_EP, 0) > listed:  # node lines missing (lower verbosity): count only
        ops = (*ops, FallbackOp(op="(unlisted)", where=_CPU_EP, count=placements[_CPU_EP] - listed))
    memcpy_nodes = sum(1 for ep in nodes for op, _ in nodes[ep] if op.startswith("Memcpy"))
    return FallbackReport(source="ort_log", path=path, accelerator=accel[0], ops=ops,
                          placements=placements,
                          transfers=max(copies, memcpy_nodes), notes=tuple(notes))


# --- Neuron ----------------------------------------------------------------------------------

_NEURON_OP = re.compile(r"(aten::\w+)")
_NEURON_BAD = re.compile(r"not supported|unsupported|partitioned to CPU|fall(?:s|ing)? ?back",
                         re.IGNORECASE)
_NEURONXCC = re.compile(r"neuronxcc-([0-9][\w.+]*)")


def parse_neuron_report(report: dict[str, Any], path: str | None = None) -> FallbackReport:
    """The ``torch_neuronx.analyze`` JSON: unsupported aten ops, where they failed, and where."""
    unsupported = (report.get("unsupported_operators") or {}).get("aten") or []
    counts: Counter[str] = Counter()
    detail: dict[str, list[str]] = defaultdict(list)
    for u in unsupported:
        if isinstance(u, dict) and u.get("kind"):
            counts[str(u["kind"])] += 1
            detail[str(u["kind"])].append(f"{u.get('failureAt', '?')} at {u.get('call', '?')}")
    pct = report.get("support_percentage")
    support = float(str(pct).rstrip("%")) if pct is not None else None
    supported = (report.get("supported_operators") or {}).get("aten") or {}
    ops = tuple(FallbackOp(op=k, where="CPU (partitioner) or compile failure", count=n,
                           time_us=None,
                           detail="; ".join(detail[k])) for k, n in sorted(counts.items()))
    notes = [f"neuronx-cc {report.get('neuronx_cc_version')}, torch-neuronx "
             f"{report.get('torch_neuronx_version')}"]
    return FallbackReport(
        source="neuron", path=path, accelerator="neuron", ops=ops,
        placements={"neuron": sum(int(v) for v in supported.values())
                    if isinstance(supported, dict) else 0,
                    "unsupported": sum(counts.values())},
        transfers=None, support_percentage=support, notes=tuple(notes),
    )


def parse_neuron_log(text: str, path: str | None = None) -> FallbackReport:
    """Compiler/partitioner log lines that name an unsupported or CPU-placed aten op."""
    counts: Counter[str] = Counter()
    where: dict[str, str] = {}
    notes: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            continue
        if _NEURON_BAD.search(line):
            for op in _NEURON_OP.findall(line):
                counts[op] += 1
                where[op] = ("CPU (partitioner)" if "partition" in line.lower()
                             else "unsupported (no automatic CPU fallback)")
        v = _NEURONXCC.search(line)
        if v and f"compiled artifacts bound to neuronx-cc {v.group(1)}" not in notes:
            notes.append(f"compiled artifacts bound to neuronx-cc {v.group(1)}")
    ops = tuple(FallbackOp(op=op, where=where[op], count=n) for op, n in sorted(counts.items()))
    return FallbackReport(source="neuron", path=path, accelerator="neuron", ops=ops,
                          placements={"unsupported": sum(counts.values())}, notes=tuple(notes))


# --- any file --------------------------------------------------------------------------------

def detect_format(path: Path) -> FallbackFormat:
    head = path.read_text(encoding="utf-8", errors="replace")[:200_000]
    if head.lstrip().startswith(("{", "[")):
        return "neuron" if "unsupported_operators" in head else "torch_trace"
    if "onnxruntime" in head and "placed on [" in head:
        return "ort_log"
    return "neuron"


def parse_fallback(path: str | Path, fmt: FallbackFormat | None = None) -> FallbackReport:
    """Read one trace or log, detecting its format when ``fmt`` is None."""
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{p}: no such trace or log file")
    kind = fmt or detect_format(p)
    text = p.read_text(encoding="utf-8", errors="replace")
    if kind == "ort_log":
        return parse_ort_log(text, str(p))
    if text.lstrip().startswith(("{", "[")):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise UsageError(f"{p}: not valid JSON ({exc})") from None
        if kind == "torch_trace":
            return parse_torch_trace(data, str(p))
        return parse_neuron_report(data, str(p))
    if kind == "torch_trace":
        raise UsageError(f"{p}: a PyTorch profiler trace must be JSON (export_chrome_trace)")
    return parse_neuron_log(text, str(p))
