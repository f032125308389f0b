"""Reading every input acceval takes: the study, task JSONL, catalogs, demand CSVs,
training logs and traces, imported peer files, claims files, ``--set`` values, result.json.

Every such file is read here, with the same limits, so that no input can make ``validate``,
``run``, ``import`` or ``report`` read forever, run out of memory or recurse until Python
gives up:

* only regular files are read (a device such as ``/dev/zero``, a FIFO or a folder is
  refused before anything is read), and at most a cap of bytes: :data:`YAML_MAX_BYTES` for
  YAML and CSV, :data:`JSONL_MAX_BYTES` for task files;
* text is UTF-8, and a file that is not is named with the byte offset of the first bad byte;
* YAML is parsed safely, nested at most :data:`YAML_MAX_DEPTH` levels, and its aliases may
  expand it to at most :data:`YAML_MAX_NODES` values (a "billion laughs" document is refused
  as it is composed, not after); a document that refers to itself, or whose aliases nest it
  deeper than that once expanded, is refused;
* JSON is nested at most :data:`JSON_MAX_DEPTH` levels, and its numbers are finite (``NaN``,
  ``Infinity`` and ``1e999`` are refused with the line they are on: JSON has no such
  numbers, and one would reach a chart as a crash);
* a gzip file expands to at most a cap (:func:`read_gzip`), whatever its members claim.

Failures are :class:`~acceval.errors.StudyError`, with ``(where, problem, hint)`` when the
caller names the field that points at the file.
"""

from __future__ import annotations

import json
import math
import os
import stat
from itertools import chain
from pathlib import Path
from typing import Any, Literal

import yaml

from acceval.errors import StudyError

#: Study files, catalogs and demand profiles: real ones are a few KiB.
YAML_MAX_BYTES = 4 * 2**20
#: Task files: a million tasks of a few hundred bytes each fit.
JSONL_MAX_BYTES = 256 * 2**20
#: Nesting of a YAML document (a study is about six levels deep).
YAML_MAX_DEPTH = 64
#: Values a YAML document may hold once its aliases are expanded.
YAML_MAX_NODES = 1_000_000
#: Training logs, profiler traces (once expanded), peer tools' result files.
DATA_MAX_BYTES = 512 * 2**20
#: result.json of a run (a few MiB for a large study).
RESULT_MAX_BYTES = 256 * 2**20
#: Nesting of a JSON document (a Kineto trace is about six levels deep).
JSON_MAX_DEPTH = 64


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB"


def _fail(path: Path, problem: str, hint: str, where: str | None,
          head: str | None = None) -> StudyError:
    hint = hint or "check the path, and that this user may read it"
    if where:
        return StudyError(f"{path}: {head or problem}", [(where, problem, hint)])
    return StudyError(f"{path}: {head or problem}", hint=hint)


def read_bytes(path: str | Path, *, max_bytes: int, where: str | None = None,
               what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; :class:`StudyError` otherwise."""
    p = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise _fail(p, f"cannot read the {what}: it does not exist",
                    "paths are relative to the study file's folder", where,
                    head=f"no such {what}") from None
    except ValueError:  # a NUL in the path
        raise _fail(p, "the path holds a NUL character", "fix the path", where) from None
    except OSError as exc:
        raise _fail(p, f"cannot read the {what} ({exc.strerror})", "", where) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        raise _fail(p, f"the {what} is {kind}", f"name a regular {what}", where)
    with os.fdopen(fd, "rb") as f:
        if st.st_size > max_bytes:
            raise _fail(p, f"the {what} is larger than {_mib(max_bytes)}",
                        "split it, or name a smaller one", where)
        try:
            # A file that grows while it is read still stops at the cap.
            data = f.read(max_bytes + 1)
        except OSError as exc:
            raise _fail(p, f"cannot read the {what} ({exc.strerror})", "", where) from None
    if len(data) > max_bytes:
        raise _fail(p, f"the {what} is larger than {_mib(max_bytes)}",
                    "split it, or name a smaller one", where)
    return data


def check_regular(path: str | Path, *, max_bytes: int, where: str | None = None,
                  what: str = "file") -> None:
    """What :func:`read_bytes` checks before it reads (a regular file of at most
    ``max_bytes``), for a file that a third-party reader opens itself."""
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise _fail(p, f"cannot read the {what}: it does not exist",
                    "paths are relative to the study file's folder", where,
                    head=f"no such {what}") from None
    except (OSError, ValueError) as exc:
        raise _fail(p, f"cannot read the {what} ({exc})", "fix the path", where) from None
    if not stat.S_ISREG(st.st_mode):
        raise _fail(p, f"the {what} is not a regular file", f"name a regular {what}", where)
    if st.st_size > max_bytes:
        raise _fail(p, f"the {what} is larger than {_mib(max_bytes)}",
                    "split it, or name a smaller one", where)


def decode(data: bytes, path: str | Path, *, where: str | None = None,
           what: str = "file", lenient: bool = False) -> str:
    """UTF-8 text of ``data`` (a leading byte-order mark is dropped); ``lenient`` replaces
    bad bytes (a log whose lines are counted one by one) instead of refusing the file."""
    if lenient:
        return data.decode("utf-8-sig", errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _fail(Path(path), f"the {what} is not UTF-8 text (byte {exc.start}, line {line})",
                    "save it as UTF-8", where) from None


def read_text(path: str | Path, *, max_bytes: int = YAML_MAX_BYTES, where: str | None = None,
              what: str = "file", lenient: bool = False) -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes`` (``lenient``: see
    :func:`decode`)."""
    return decode(read_bytes(path, max_bytes=max_bytes, where=where, what=what), path,
                  where=where, what=what, lenient=lenient)


def read_gzip(path: str | Path, *, max_bytes: int, where: str | None = None,
              what: str = "file") -> bytes:
    """The expanded bytes of a gzip file (every member) of at most ``max_bytes`` expanded;
    the compressed file is capped by the same figure. A "gzip bomb" stops at the cap."""
    import gzip
    import io
    import zlib

    raw = read_bytes(path, max_bytes=max_bytes, where=where, what=what)
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as f:
            data = f.read(max_bytes + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise _fail(Path(path), f"the {what} is named .gz but is not whole gzip ({exc})",
                    "compress it again with gzip, or drop the .gz from its name",
                    where) from None
    if len(data) > max_bytes:
        raise _fail(Path(path), f"the {what} expands to more than {_mib(max_bytes)}",
                    "split it, or name a smaller one", where)
    return data


class _NotFinite(ValueError):
    """A JSON number that is not finite (``NaN``, ``Infinity``, ``1e999``)."""


def _refuse_constant(name: str) -> Any:
    raise _NotFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotFinite(text)
    return value


def _finite_or_none(text: str) -> float | None:
    value = float(text)
    return value if math.isfinite(value) else None


#: What :func:`loads_json` does with a number that is not finite: refuse the document, read
#: it as missing (None; peers' files write NaN for "no value"), or keep it for a reader that
#: counts such a line itself (a training log whose loss went NaN).
NonFinite = Literal["refuse", "none", "keep"]


def json_depth_problem(data: Any, max_depth: int = JSON_MAX_DEPTH) -> str | None:
    """Why parsed JSON is too deep to walk, or None (iterative: no recursion). Level by
    level, keeping only the containers: a profiler trace is hundreds of thousands of scalars
    in a few levels, and pushing each of them cost 0.3 s of every re-analysis."""
    level = [data] if isinstance(data, _CONTAINERS) else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return f"nested more than {max_depth} levels deep"
        # One pass over the level's values (no loop per container: 66k of them in a trace).
        maps = [n for n in level if isinstance(n, dict)]
        seqs = [n for n in level if not isinstance(n, dict)]
        values = chain(chain.from_iterable(map(dict.values, maps)), chain.from_iterable(seqs))
        level = [c for c in values if isinstance(c, _CONTAINERS)]
    return None


_CONTAINERS = (dict, list)


def loads_json(text: str | bytes, *, non_finite: NonFinite = "refuse") -> Any:
    """``json.loads`` with bounded nesting, and numbers that are not finite handled as
    ``non_finite`` says; ``ValueError`` otherwise, for callers that count a bad line rather
    than stop (a :class:`json.JSONDecodeError` keeps its line)."""
    hooks: dict[str, Any] = {}
    if non_finite == "refuse":
        hooks = {"parse_constant": _refuse_constant, "parse_float": _finite_float}
    elif non_finite == "none":
        hooks = {"parse_constant": lambda _: None, "parse_float": _finite_or_none}
    try:
        data = json.loads(text, **hooks)
    except _NotFinite as exc:
        raise ValueError(f"{exc} is not a finite number") from None
    except RecursionError:
        raise ValueError(f"nested more than {JSON_MAX_DEPTH} levels deep") from None
    problem = json_depth_problem(data)
    if problem is not None:
        raise ValueError(problem)
    return data


def load_json(text: str, *, source: str, hint: str = "",
              non_finite: NonFinite = "refuse") -> Any:
    """Parse one JSON document within the limits; :class:`StudyError` names the line."""
    try:
        return loads_json(text, non_finite=non_finite)
    except json.JSONDecodeError as exc:
        raise StudyError(f"{source}: not valid JSON at line {exc.lineno}, column {exc.colno} "
                         f"({exc.msg})", hint=hint or "fix the JSON at that line") from None
    except ValueError as exc:
        raise StudyError(f"{source}: {exc}",
                         hint=hint or "write finite numbers, nested less deeply") from None


def read_json(path: str | Path, *, max_bytes: int = DATA_MAX_BYTES, where: str | None = None,
              what: str = "JSON file", hint: str = "", non_finite: NonFinite = "refuse") -> Any:
    """The parsed content of a JSON file (``.gz``: gzip, capped once expanded)."""
    data = (read_gzip(path, max_bytes=max_bytes, where=where, what=what)
            if str(path).endswith(".gz")
            else read_bytes(path, max_bytes=max_bytes, where=where, what=what))
    return load_json(decode(data, path, where=where, what=what), source=str(path), hint=hint,
                     non_finite=non_finite)


class _Too(yaml.YAMLError):
    """The document is too deep or too large; ``mark`` says where."""

    def __init__(self, problem: str, mark: Any) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = mark


class _Loader(yaml.SafeLoader):
    """SafeLoader that counts while it composes: nesting, and values with aliases expanded
    (an alias costs what its anchor holds, computed once per anchor)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0
        self._size: dict[int, int] = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            node = super().compose_node(parent, index)
            self._count(self._size.get(id(node), 1), event.start_mark)
            return node
        self._depth += 1
        if self._depth > YAML_MAX_DEPTH:
            raise _Too(f"nested more than {YAML_MAX_DEPTH} levels deep", event.start_mark)
        before = self._nodes
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._count(1, event.start_mark)
        self._size[id(node)] = self._nodes - before
        return node

    def _count(self, n: int, mark: Any) -> None:
        self._nodes += n
        if self._nodes > YAML_MAX_NODES:
            raise _Too(f"holds more than {YAML_MAX_NODES:,} values once its aliases are "
                       "expanded", mark)


def _shape_problem(data: Any) -> str | None:
    """What makes parsed data unwalkable: a container that holds itself (``&a [*a]``), or
    aliases of aliases nesting it deeper than :data:`YAML_MAX_DEPTH` once expanded."""
    height: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[Any, bool]] = [(data, False)]
    while stack:
        node, leaving = stack.pop()
        if not isinstance(node, dict | list):
            continue
        children = [c for c in (node.values() if isinstance(node, dict) else node)
                    if isinstance(c, dict | list)]
        if leaving:
            open_.discard(id(node))
            height[id(node)] = 1 + max((height[id(c)] for c in children), default=0)
            if height[id(node)] > YAML_MAX_DEPTH:
                return f"nested more than {YAML_MAX_DEPTH} levels deep once its aliases " \
                       "are expanded"
            continue
        if id(node) in height:
            continue
        if id(node) in open_:
            return "an alias refers to the value that holds it; write the value out"
        open_.add(id(node))
        stack.append((node, True))
        stack.extend((c, False) for c in children)
    return None


def load_yaml(text: str, *, source: str) -> Any:
    """Parse one YAML document within the limits; :class:`StudyError` names the line."""
    loader = None
    try:
        loader = _Loader(text)  # it checks the characters as it is made
        data = loader.get_single_data()
    except yaml.reader.ReaderError as exc:
        line = text[: exc.position].count("\n") + 1
        raise StudyError(f"{source}: not valid YAML at line {line}: character "
                         f"#x{exc.character:04x} is not allowed in YAML",
                         hint="remove that character, or quote the value") from None
    except _Too as exc:
        mark = exc.problem_mark
        raise StudyError(f"{source}: not valid YAML at line {mark.line + 1}, column "
                         f"{mark.column + 1}: {exc.problem}",
                         hint="write it with fewer levels and fewer aliases") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or exc
        raise StudyError(f"{source}: not valid YAML{where}: {problem}",
                         hint="fix the YAML at that line (indentation, a missing ':' or "
                         "closing bracket, or quote the value)") from None
    except RecursionError:
        raise StudyError(f"{source}: not valid YAML: nested too deeply",
                         hint="write it with fewer levels") from None
    except (ValueError, OverflowError) as exc:  # a constructor's: an integer of 10,000 digits
        raise StudyError(f"{source}: a value YAML cannot hold ({str(exc)[:120]})",
                         hint="write the number in fewer digits, or quote it") from None
    finally:
        if loader is not None:
            loader.dispose()
    problem = _shape_problem(data)
    if problem is not None:
        raise StudyError(f"{source}: {problem}",
                         hint="write the repeated value out instead of an alias")
    return data


def read_yaml(path: str | Path, *, where: str | None = None, what: str = "YAML file") -> Any:
    """The parsed content of a YAML file, read within the limits."""
    return load_yaml(read_text(path, where=where, what=what), source=str(path))


__all__ = [
    "DATA_MAX_BYTES",
    "JSONL_MAX_BYTES",
    "JSON_MAX_DEPTH",
    "RESULT_MAX_BYTES",
    "YAML_MAX_BYTES",
    "YAML_MAX_DEPTH",
    "YAML_MAX_NODES",
    "check_regular",
    "decode",
    "json_depth_problem",
    "load_json",
    "load_yaml",
    "loads_json",
    "read_bytes",
    "read_gzip",
    "read_json",
    "read_text",
    "read_yaml",
]
