"""Install acceval into a virtual environment: ``python tools/install-venv.py VENV EXTRAS``.

`make demo` and `make test` call this once (their stamp files remember it). It installs with
uv, in the venv, when uv installs from the package index: uv resolves and unpacks the same
releases pip picks (``--index-strategy unsafe-best-match`` takes the best version across every
index, as pip does) in about a tenth of pip's time. pip's own settings (``pip config list``:
the index, extra indexes, find-links, constraints, certificates, from files or ``PIP_*``
variables) are passed to uv, which reads none of them itself; a local folder or ``file:`` index
that is not there is left out, as pip skips it with a warning. Where uv cannot be installed or
fails, pip installs instead.

Bytecode: the whole venv is not compiled (78 s of CPU for files no run imports). The modules a
run and the suite import are compiled instead, by importing them once, a few packages per
process on every core; what is imported later is compiled by the first process that needs it
(``PYTHONDONTWRITEBYTECODE`` is unset for these, as the Makefile unsets it).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

# What a run or the suite imports that is slow to compile, one group per process.
WARM = (("torch",), ("transformers", "tokenizers", "safetensors"),
        ("ray", "ray.cluster_utils"), ("agents", "mcp", "openai"),
        ("pyarrow", "pyarrow.parquet", "pyarrow.compute", "duckdb", "numpy", "pydantic",
         "aiohttp", "uvloop", "yaml", "rich", "click", "jsonschema", "psutil",
         "prometheus_client", "plotly"),
        ("playwright.async_api", "playwright.sync_api", "onnxruntime_genai",
         "hypothesis", "pytest", "xdist", "mlperf_logging", "hta", "tensorboard"))
UV_OPTIONS = {"index-url": "--index-url", "extra-index-url": "--extra-index-url",
              "find-links": "--find-links", "constraint": "--constraint"}


def main(argv: list[str]) -> int:
    venv, extras = Path(argv[0]), argv[1]
    python = venv / "bin" / "python"
    if not python.exists():
        run([sys.executable, "-m", "venv", str(venv)])
    start = time.monotonic()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    spec = f".[{extras}]"
    if not install_with_uv(python, spec, env):
        print("install-venv: uv was not available; installing with pip (slower)", flush=True)
        run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], env=env)
        run([str(python), "-m", "pip", "install", "-q", "-e", spec], env=env)
    warm(python, env)
    print(f"install-venv: {venv} ready in {time.monotonic() - start:.0f} s", flush=True)
    return 0


def install_with_uv(python: Path, spec: str, env: dict[str, str]) -> bool:
    pip = [str(python), "-m", "pip"]
    got = subprocess.run([*pip, "install", "-q", "--disable-pip-version-check", "uv"],
                         env=env, capture_output=True, text=True, check=False)
    uv = python.parent / "uv"
    if got.returncode != 0 or not uv.exists():
        return False
    args, cert = uv_options(pip_settings(pip, env))
    uv_env = {**env, **({"SSL_CERT_FILE": cert} if cert else {})}
    cmd = [str(uv), "pip", "install", "--quiet", "--python", str(python),
           "--index-strategy", "unsafe-best-match", *args, "-e", spec]
    done = subprocess.run(cmd, env=uv_env, check=False)
    if done.returncode != 0:
        print(f"install-venv: `{shlex.join(cmd)}` failed (exit {done.returncode})", flush=True)
    return done.returncode == 0


def pip_settings(pip: list[str], env: dict[str, str]) -> dict[str, list[str]]:
    """pip's configured values by option name, from every scope `pip config list` shows."""
    out = subprocess.run([*pip, "config", "list"], env=env, capture_output=True, text=True,
                         check=False).stdout
    settings: dict[str, list[str]] = {}
    for line in out.splitlines():
        key, sep, value = line.partition("=")
        if not sep:
            continue
        name = key.rsplit(".", 1)[-1]
        for item in shlex.split(value.strip().strip("'").strip('"')):
            if item not in settings.setdefault(name, []):
                settings[name].append(item)
    return settings


def uv_options(settings: dict[str, list[str]]) -> tuple[list[str], str | None]:
    args: list[str] = []
    for name, flag in UV_OPTIONS.items():
        for value in settings.get(name, []):
            if is_there(value):
                args += [flag, value]
    certs = [c for c in settings.get("cert", []) if Path(c).exists()]
    return args, (certs[0] if certs else None)


def is_there(location: str) -> bool:
    """A remote index is taken as given; a local folder, file or ``file:`` URL must exist."""
    parsed = urlparse(location)
    if parsed.scheme in ("http", "https"):
        return True
    return Path(unquote(parsed.path) if parsed.scheme == "file" else location).exists()


def warm(python: Path, env: dict[str, str]) -> None:
    """Import the slow-to-compile packages once, writing their bytecode, every group in its
    own process at once. A package the extras did not install is skipped."""
    code = ("import importlib, importlib.util, sys\n"
            "for m in sys.argv[1:]:\n"
            "    try:\n"
            "        if importlib.util.find_spec(m.split('.')[0]): importlib.import_module(m)\n"
            "    except Exception as e: print(f'install-venv: importing {m}: {e}')\n")
    procs = [subprocess.Popen([str(python), "-c", code, *group], env=env) for group in WARM]
    for p in procs:
        p.wait()


def run(cmd: list[str], env: dict[str, str] | None = None) -> None:
    subprocess.run(cmd, env=env, check=True)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
