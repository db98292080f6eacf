#!/usr/bin/env python
"""Generate the committed Triton API snapshots from real wheels (never hand-typed).

For each version: `pip download triton==V --no-deps` into the cache, extract the wheel's `triton/`
package, import it from there in a subprocess (analysis/api_introspect.py --path DIR) and write
analysis/api_snapshots/triton-V.json.gz (compact: names, signatures, parameter lists, first doc
paragraph). The wheel's binaries must match this Python (cp311 here).

Usage: python scripts/gen_api_snapshot.py 3.5.1 3.6.0 3.9.0
Cache: ${TRITONLENS_CACHE:-~/.cache/tritonlens}/wheels
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INTROSPECT = REPO / "analysis" / "api_introspect.py"
OUT = REPO / "analysis" / "api_snapshots"


def cache_dir() -> Path:
    return Path(os.environ.get("TRITONLENS_CACHE", Path.home() / ".cache" / "tritonlens")) / "wheels"


def wheel_for(version: str) -> Path:
    d = cache_dir()
    d.mkdir(parents=True, exist_ok=True)
    found = sorted(d.glob(f"triton-{version}-*.whl"))
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", f"triton=={version}", "--no-deps", "-q", "-d", str(d)],
                       check=True)
        found = sorted(d.glob(f"triton-{version}-*.whl"))
    if not found:
        raise SystemExit(f"no wheel of triton {version} for this Python")
    return found[0]


def extracted(version: str) -> Path:
    target = cache_dir() / f"triton-{version}"
    if not (target / "triton" / "__init__.py").is_file():
        with zipfile.ZipFile(wheel_for(version)) as z:
            z.extractall(target, [n for n in z.namelist() if n.startswith("triton/")])
    return target


def compact(dump: dict) -> dict:
    """Parameters as [name, kind, default?]; a module identical to another is stored once."""
    kinds = {"POSITIONAL_ONLY": "p", "POSITIONAL_OR_KEYWORD": "pk", "KEYWORD_ONLY": "k", "VAR_POSITIONAL": "*",
             "VAR_KEYWORD": "**"}
    modules = {}
    for mod, members in dump["modules"].items():
        out = {}
        for name, e in members.items():
            e = dict(e)
            if "params" in e:
                e["params"] = [[p["name"], kinds[p["kind"]]] + ([p["default"]] if "default" in p else []) for p in e["params"]]
            e.pop("defined_in", None)
            out[name] = e
        modules[mod] = out
    cuda = "triton.language.extra.cuda.libdevice"
    generic = "triton.language.extra.libdevice"
    if cuda in modules and generic in modules and set(modules[cuda]) == set(modules[generic]):
        modules[cuda] = {"$same_as": generic}
    return {"triton_version": dump["triton_version"], "generated_by": "scripts/gen_api_snapshot.py",
            "python": dump["python"], "modules": modules, "errors": dump.get("errors", {})}


def snapshot(version: str) -> Path:
    path = extracted(version)
    env = dict(os.environ, PYTHONNOUSERSITE="1", TRITON_CACHE_DIR=str(cache_dir() / "triton-cache"))
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([sys.executable, "-s", str(INTROSPECT), "--path", str(path)], capture_output=True, text=True,
                          env=env, cwd=str(path), timeout=300)
    if proc.returncode != 0:
        raise SystemExit(f"introspecting triton {version} failed:\n{proc.stderr[-2000:]}")
    dump = json.loads(proc.stdout)
    if dump["triton_version"] != version:
        raise SystemExit(f"asked for {version}, imported {dump['triton_version']}: sys.path is wrong")
    OUT.mkdir(parents=True, exist_ok=True)
    out = OUT / f"triton-{version}.json.gz"
    data = json.dumps(compact(dump), sort_keys=True, separators=(",", ":")).encode()
    # mtime=0: the same API gives the same bytes, so regenerating does not churn the repository.
    with open(out, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as gz:
        gz.write(data)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("versions", nargs="+")
    args = ap.parse_args()
    for v in args.versions:
        out = snapshot(v)
        print(f"triton {v}: {out.relative_to(REPO)} ({out.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
