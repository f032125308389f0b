"""What a name in a study file may be: targets, training platforms and agent targets name
folders, records and report rows."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
#: Names become folder and file names (``<name>-<UTC time>``): short enough for any file system.
NAME_MAX = 100


def check_name(v: str) -> str:
    if not _NAME_RE.fullmatch(v):
        raise ValueError("use letters, digits, '-', '_' or '.' only, starting with a letter "
                         "or digit")
    if len(v) > NAME_MAX:
        raise ValueError(f"at most {NAME_MAX} characters (it names folders); got {len(v)}")
    return v


Name = Annotated[str, AfterValidator(check_name)]
"""A name field: letters, digits, ``-``, ``_``, ``.``, at most :data:`NAME_MAX` characters."""

__all__ = ["NAME_MAX", "Name", "check_name"]
