"""Every error about a whole file (no field to name) ends with a `hint:` line that says
what to do (issue 30: 13 of them had none)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from acceval.cli import entry

CASES: dict[str, bytes | None] = {
    "empty": b"",
    "a list": b"- a\n- b\n",
    "bad syntax": b"a: [\n",
    "bad utf-8": b"name: \xff\n",
    "a control character": b"name: a\x07b\n",
    "an alias of itself": b"a: &a [*a]\n",
    "an alias bomb": b"a: &a [x,x,x,x,x,x,x,x,x]\n" + b"".join(
        b"%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n" % ((98 + i,) * 2 + (97 + i,) * 9)
        for i in range(8)),
    "too deep": b"a: " + b"[" * 200 + b"]" * 200 + b"\n",
    "a huge integer": b"name: x\nseed: " + b"9" * 5000 + b"\n",
    "a device": None,
    "a fifo": None,
    "missing": None,
    "too large": None,
}


def _path(tmp_path: Path, case: str) -> Path:
    if case == "a device":
        return Path("/dev/zero")
    p = tmp_path / "study.yaml"
    if case == "a fifo":
        os.mkfifo(p)
    elif case == "too large":
        with p.open("wb") as f:
            f.truncate(8 * 2**20)
    elif case != "missing":
        data = CASES[case]
        assert data is not None
        p.write_bytes(data)
    return p


@pytest.mark.parametrize("case", list(CASES))
def test_a_whole_file_error_says_what_to_do(tmp_path: Path, case: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert entry(["validate", str(_path(tmp_path, case))]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acceval: error: ") and "Traceback" not in err
    hints = [ln for ln in err.splitlines() if ln.strip().startswith("hint: ")]
    assert hints and all(len(h.strip()) > len("hint: ") + 5 for h in hints), err
