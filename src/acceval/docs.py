"""Reference docs generated from code: the study-file reference and the CLI reference.

``python -m acceval.docs`` rewrites them; a test checks that the committed copies are current.
"""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel

from acceval.study import Study


def _type_name(ann: Any) -> str:
    origin = typing.get_origin(ann)
    if origin is typing.Annotated:
        return _type_name(typing.get_args(ann)[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in typing.get_args(ann))
    if origin is typing.Literal:
        return " | ".join(repr(a) for a in typing.get_args(ann))
    if origin in (list, tuple):
        args = typing.get_args(ann)
        return f"list[{_type_name(args[0])}]" if args else "list"
    if origin is dict:
        return "mapping"
    if ann is type(None):
        return "null"
    if isinstance(ann, type):
        return ann.__name__
    return str(ann).replace("typing.", "")


def _shared_base(m: type[BaseModel]) -> type[BaseModel] | None:
    """The base whose fields a union member shares with its siblings (a load family's)."""
    base = m.__mro__[1]
    if isinstance(base, type) and issubclass(base, BaseModel) and base.model_fields:
        return base
    return None


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    seen: list[type[BaseModel]] = []

    def visit(m: type[BaseModel]) -> None:
        if m in seen:
            return
        base = _shared_base(m)
        if base is not None:
            visit(base)
        seen.append(m)
        for f in m.model_fields.values():
            stack = [f.annotation]
            while stack:
                a = stack.pop()
                if isinstance(a, type) and issubclass(a, BaseModel):
                    visit(a)
                stack.extend(reversed(typing.get_args(a)))

    visit(root)
    return seen


def study_reference() -> str:
    lines = [
        "# Study file reference",
        "",
        "Generated from the schemas the study composes (`src/acceval/study.py` and each",
        "concept's `spec`) by `python -m acceval.docs`; do not edit by hand. Unknown fields",
        "are errors (`acceval validate` names them).",
        "",
    ]
    for m in _models(Study):
        base = _shared_base(m)
        lines += [f"## {m.__name__}", "", (m.__doc__ or "").strip().replace("\n    ", " "), ""]
        if base is not None:
            lines += [f"Also takes every field of [{base.__name__}](#{base.__name__.lower()}).",
                      ""]
        lines += ["| field | type | default | description |", "|---|---|---|---|"]
        for name, f in m.model_fields.items():
            if base is not None and name in base.model_fields:
                continue
            if f.is_required():
                default = "**required**"
            elif f.default_factory is not None:
                default = "(see type)"
            else:
                default = f"`{f.default!r}`"
            desc = (f.description or "").replace("|", "\\|")
            lines.append(f"| `{name}` | {_type_name(f.annotation)} | {default} | {desc} |")
        lines.append("")
    return "\n".join(lines)


def cli_reference() -> str:
    from acceval.cli import main

    lines = ["# CLI reference", "", "Generated from the code by `python -m acceval.docs`.", ""]

    def walk(cmd: click.Command, path: list[str], parent: click.Context | None) -> None:
        # The group's context settings (-h as well as --help) reach every command, as they
        # do when the command line runs; click caches the help option on the command.
        ctx = click.Context(cmd, info_name=" ".join(path), parent=parent,
                            **(cmd.context_settings if parent is None else {}))
        lines.extend([f"## `{' '.join(path)}`", "", "```", cmd.get_help(ctx), "```", ""])
        if isinstance(cmd, click.Group):
            for name in sorted(cmd.commands):
                walk(cmd.commands[name], [*path, name], ctx)

    walk(main, ["acceval"], None)
    return "\n".join(lines)


GENERATED = {"docs/study-reference.md": study_reference, "docs/cli.md": cli_reference}


def write_all(root: Path) -> list[Path]:
    out = []
    for rel, fn in GENERATED.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(fn() + "\n", encoding="utf-8")
        out.append(p)
    return out


if __name__ == "__main__":
    for written in write_all(Path(sys.argv[1] if len(sys.argv) > 1 else ".")):
        print(f"wrote {written}")
