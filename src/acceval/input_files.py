"""Reading the files a study names: the study itself, task JSONL, catalogs, demand CSVs.

Every such file is read here, with the same limits, so that no input can make ``validate``
or ``run`` read forever, run out of memory or recurse until Python gives up:

* only regular files are read (a device such as ``/dev/zero``, a FIFO or a folder is
  refused before anything is read), and at most a cap of bytes: :data:`YAML_MAX_BYTES` for
  YAML and CSV, :data:`JSONL_MAX_BYTES` for task files;
* text is UTF-8, and a file that is not is named with the byte offset of the first bad byte;
* YAML is parsed safely, nested at most :data:`YAML_MAX_DEPTH` levels, and its aliases may
  expand it to at most :data:`YAML_MAX_NODES` values (a "billion laughs" document is refused
  as it is composed, not after); a document that refers to itself, or whose aliases nest it
  deeper than that once expanded, is refused.

Failures are :class:`~acceval.errors.StudyError`, with ``(where, problem, hint)`` when the
caller names the field that points at the file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

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


def _mib(n: int) -> str:
    return f"{n / 2**20:g} MiB"


def _fail(path: Path, problem: str, hint: str, where: str | None,
          head: str | None = None) -> StudyError:
    return StudyError(f"{path}: {head or problem}", [(where, problem, hint)] if where else None)


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


def decode(data: bytes, path: str | Path, *, where: str | None = None,
           what: str = "file") -> str:
    """UTF-8 text of ``data`` (a leading byte-order mark is dropped)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise _fail(Path(path), f"the {what} is not UTF-8 text (byte {exc.start}, line {line})",
                    "save it as UTF-8", where) from None


def read_text(path: str | Path, *, max_bytes: int = YAML_MAX_BYTES, where: str | None = None,
              what: str = "file") -> str:
    """The UTF-8 text of a regular file of at most ``max_bytes``."""
    return decode(read_bytes(path, max_bytes=max_bytes, where=where, what=what), path,
                  where=where, what=what)


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
                         f"#x{exc.character:04x} is not allowed in YAML") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or exc
        raise StudyError(f"{source}: not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise StudyError(f"{source}: not valid YAML: nested too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()
    problem = _shape_problem(data)
    if problem is not None:
        raise StudyError(f"{source}: {problem}")
    return data


def read_yaml(path: str | Path, *, where: str | None = None, what: str = "YAML file") -> Any:
    """The parsed content of a YAML file, read within the limits."""
    return load_yaml(read_text(path, where=where, what=what), source=str(path))


__all__ = ["JSONL_MAX_BYTES", "YAML_MAX_BYTES", "YAML_MAX_DEPTH", "YAML_MAX_NODES", "decode",
           "load_yaml", "read_bytes", "read_text", "read_yaml"]
