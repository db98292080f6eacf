"""Does the CPU cross-compile predict what the GPU's own JIT compile produces? Run on a GPU machine.

1. Runs every example's `tritonlens_cases()` on the GPU with JITFunction.run wrapped: each distinct
   compiled kernel's launch arguments (dtype, data_ptr, scalar values, constexprs, options) and what
   the JIT reports after loading it (n_regs, n_spills × 4 = local bytes, metadata.shared) are recorded;
   `knobs.runtime.jit_cache_hook` hands over the JIT's own signature and specialisation attributes.
   Autotuner benchmarking launches are recorded too (every config), and so are configs the GPU
   refuses with OutOfResources.
2. Cross-compiles the same launches in a separate process that sees no GPU (CUDA_VISIBLE_DEVICES="")
   and has an empty Triton cache, through the worker's job_compile — the code tritonlens uses.
3. Prints a table and writes JSON; exit status 1 if any figure differs.

    python bench/compile_vs_gpu.py --out bench/results
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "profiling" / "worker"
OPTION_NAMES = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _jsonable(v):
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if type(v).__name__ == "constexpr":
        return _jsonable(v.value)
    return str(v)


def describe(fn, args, kwargs) -> dict:
    names = [p.name for p in fn.params]
    bound = dict(zip(names, args))
    bound.update({k: v for k, v in kwargs.items() if k in names})
    out = {}
    for p in fn.params:
        if p.name not in bound:
            continue
        v = bound[p.name]
        if p.is_constexpr:
            out[p.name] = {"kind": "constexpr", "value": _jsonable(v)}
        elif hasattr(v, "data_ptr") and hasattr(v, "dtype"):
            out[p.name] = {"kind": "tensor", "dtype": str(v.dtype).replace("torch.", ""), "data_ptr": v.data_ptr()}
        elif isinstance(v, bool):
            out[p.name] = {"kind": "bool", "value": v}
        elif isinstance(v, int):
            out[p.name] = {"kind": "int", "value": v}
        elif isinstance(v, float):
            out[p.name] = {"kind": "float", "value": v}
        elif v is None:
            out[p.name] = {"kind": "none"}
        elif type(v).__name__ == "dtype":
            out[p.name] = {"kind": "dtype", "value": str(v)}
        else:
            out[p.name] = {"kind": "constexpr", "value": _jsonable(v)}
    return out


def gpu_phase(examples: list[Path]) -> list[dict]:
    import torch
    from triton import knobs
    from triton.runtime.autotuner import OutOfResources
    from triton.runtime.jit import JITFunction

    hooked: dict[str, dict] = {}
    order: list[str] = []

    def hook(*, key, repr, fn, compile, is_manual_warmup, already_compiled):
        attrs = compile["configs"][0] if compile.get("configs") else {}
        hooked[str(key)] = {"signature": {k: str(v) for k, v in compile["signature"].items()},
                            "divisible": sorted(k[0] for k, v in attrs.items()
                                                if any(a and a[0] == "tt.divisibility" for a in v)),
                            "constants": {str(k): _jsonable(v) for k, v in compile["constants"].items()},
                            "num_warps": compile["num_warps"], "num_stages": compile["num_stages"]}
        order.append(str(key))
        return False  # record only: the JIT compiles as usual

    knobs.runtime.jit_cache_hook = hook
    records: list[dict] = []
    seen: set = set()
    original = JITFunction.run
    current = {"file": None}

    def run(self, *args, grid, warmup, **kwargs):
        mark = len(order)
        try:
            kernel = original(self, *args, grid=grid, warmup=warmup, **kwargs)
        except OutOfResources as exc:
            records.append({"file": current["file"], "kernel": self.fn.__name__, "args": describe(self, args, kwargs),
                            "options": {k: kwargs[k] for k in OPTION_NAMES if k in kwargs},
                            "gpu": {"error": f"OutOfResources: {exc}", "required": getattr(exc, "required", None)},
                            "jit": hooked.get(order[-1]) if len(order) > mark else None})
            raise
        if kernel is None or warmup or id(kernel) in seen:
            return kernel
        seen.add(id(kernel))
        records.append({"file": current["file"], "kernel": self.fn.__name__, "args": describe(self, args, kwargs),
                        "options": {k: kwargs[k] for k in OPTION_NAMES if k in kwargs},
                        "gpu": {"registers": kernel.n_regs, "local_bytes": kernel.n_spills * 4,
                                "shared_bytes": kernel.metadata.shared, "num_warps": kernel.metadata.num_warps,
                                "num_stages": kernel.metadata.num_stages},
                        "jit": hooked.get(order[-1]) if len(order) > mark else None})
        return kernel

    JITFunction.run = run
    try:
        for path in examples:
            current["file"] = str(path)
            spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
            module = importlib.util.module_from_spec(spec)
            sys.path.insert(0, str(path.parent))
            try:
                spec.loader.exec_module(module)
                cases = list(module.tritonlens_cases())
            except Exception:  # noqa: BLE001 - one broken example must not hide the others
                records.append({"file": str(path), "kernel": None, "error": traceback.format_exc(limit=5)})
                continue
            for case in cases:
                fn, args, kw = (tuple(case) + ({},))[:3]
                try:
                    fn(*args, **kw)
                    torch.cuda.synchronize()
                except OutOfResources:
                    pass  # recorded by the wrapper: the cross-compile must predict it
                except Exception:  # noqa: BLE001
                    records.append({"file": str(path), "kernel": None, "error": traceback.format_exc(limit=5)})
    finally:
        JITFunction.run = original
        knobs.runtime.jit_cache_hook = None
    return records


def cross_phase(records: list[dict], target: str) -> dict:
    """One job per file in a process with no GPU and a cold Triton cache."""
    by_file: dict[str, list[int]] = {}
    for i, r in enumerate(records):
        if r.get("kernel"):
            by_file.setdefault(r["file"], []).append(i)
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", TRITON_CACHE_DIR=tempfile.mkdtemp(prefix="xcompile-"))
    out = {}
    for path, idx in by_file.items():
        job = {"kind": "compile", "path": path, "target": target, "artifacts": [],
               "kernels": [{"name": records[i]["kernel"], "configs": [
                   {"label": str(i), "args": records[i]["args"], "options": records[i]["options"]}]} for i in idx]}
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, str(WORKER / "job_compile.py")], input=json.dumps(job),
                              capture_output=True, text=True, env=env, timeout=900, check=False)
        if proc.returncode != 0:
            for i in idx:
                out[i] = {"error": {"message": proc.stderr[-2000:]}}
            continue
        reply = json.loads(proc.stdout)
        for i, k in zip(idx, reply["kernels"]):
            out[i] = (k["configs"] or [{"error": k.get("error")}])[0] | {"file_s": round(time.perf_counter() - t0, 2)}
            if reply.get("error"):
                out[i]["error"] = reply["error"]
    return out


def compare(records, cross) -> list[dict]:
    rows = []
    for i, r in enumerate(records):
        if not r.get("kernel"):
            rows.append({"example": Path(r["file"]).name, "kernel": "-", "config": "-", "match": False,
                         "note": r.get("error", "")[-300:]})
            continue
        c = cross.get(i, {})
        g = r["gpu"]
        cx = {k: v["value"] for k, v in r["args"].items() if v["kind"] == "constexpr"}
        cfg = ", ".join(f"{k}={v}" for k, v in cx.items())
        row = {"example": Path(r["file"]).name, "kernel": r["kernel"],
               "config": f"{cfg}; warps={r['options'].get('num_warps', g.get('num_warps', '?'))}, "
                         f"stages={r['options'].get('num_stages', g.get('num_stages', '?'))}"}
        if c.get("error"):
            row.update(match=False, note=f"cross-compile error: {c['error'].get('message', '')[:300]}")
            rows.append(row)
            continue
        cross_local = max(c.get("stack_bytes", 0), c.get("local_bytes", 0))
        jit = r.get("jit") or {}
        sig_ok = jit.get("signature") == c.get("signature") if jit else None
        div_ok = None
        if jit and c.get("signature"):
            sig_names = list(c["signature"])
            div_gpu = sorted(sig_names[j] for j in jit["divisible"] if j < len(sig_names))
            div_cross = sorted(n for n, f in (c.get("specialization") or {}).items() if f == "D")
            div_ok = div_gpu == div_cross
        if "error" in g:
            row.update(gpu_registers=None, gpu_local=None, gpu_shared=g.get("required"),
                       cross_registers=c.get("registers"), cross_local=cross_local,
                       cross_shared=c.get("shared_bytes"), signature=sig_ok, divisibility=div_ok,
                       note="GPU refused the launch: " + g["error"][:120])
            row["match"] = g.get("required") == c.get("shared_bytes") and sig_ok is not False and div_ok is not False
        else:
            row.update(gpu_registers=g["registers"], cross_registers=c.get("registers"), gpu_local=g["local_bytes"],
                       cross_local=cross_local, gpu_shared=g["shared_bytes"], cross_shared=c.get("shared_bytes"),
                       signature=sig_ok, divisibility=div_ok, note="")
            row["match"] = (g["registers"] == c.get("registers") and g["local_bytes"] == cross_local
                            and g["shared_bytes"] == c.get("shared_bytes") and sig_ok is not False
                            and div_ok is not False)
        row["cross_compile_s"] = c.get("compile_s")
        rows.append(row)
    return rows


def table(rows, meta) -> str:
    title = (f"# CPU cross-compile vs the GPU's JIT compile ({meta['device']}, triton {meta['triton']}, "
             f"torch {meta['torch']}, target {meta['target']})")
    header = ("| example | kernel | config | regs GPU / cross | local B GPU / cross | shared B GPU / cross | "
              "signature | divisibility | agree |")
    out = [title, "", header, "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["kernel"] == "-":
            out.append(f"| {r['example']} | - | - | | | | | | NO: {r['note'][:80]} |")
            continue
        yn = lambda v: "—" if v is None else "same" if v else "DIFFERENT"
        out.append(f"| {r['example']} | {r['kernel']} | {r['config']} | {r.get('gpu_registers')} / "
                   f"{r.get('cross_registers')} | {r.get('gpu_local')} / {r.get('cross_local')} | "
                   f"{r.get('gpu_shared')} / {r.get('cross_shared')} | {yn(r.get('signature'))} | "
                   f"{yn(r.get('divisibility'))} | {'yes' if r['match'] else 'NO'}"
                   + (f" ({r['note']})" if r.get("note") else "") + " |")
    n_ok = sum(r["match"] for r in rows)
    out += ["", f"{n_ok} of {len(rows)} compiled kernels agree exactly."]
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("examples", nargs="*")
    args = ap.parse_args()
    import torch
    import triton

    examples = [Path(p).resolve() for p in args.examples] or (
        sorted((ROOT / "examples").glob("*.py")) + [ROOT / "tests" / "compile" / "fixtures" / "mm_kernel.py"])
    t0 = time.perf_counter()
    records = gpu_phase(examples)
    gpu_s = time.perf_counter() - t0
    cross = cross_phase(records, args.target)
    rows = compare(records, cross)
    meta = {"device": torch.cuda.get_device_name(0), "triton": triton.__version__, "torch": torch.__version__,
            "python": sys.version.split()[0], "target": args.target, "gpu_phase_s": round(gpu_s, 1),
            "cross_phase_s": round(time.perf_counter() - t0 - gpu_s, 1)}
    text = table(rows, meta)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compile_vs_gpu.md").write_text(text + "\n", encoding="utf-8")
    dump = json.dumps({"meta": meta, "rows": rows, "records": records, "cross": {str(k): v for k, v in cross.items()}},
                      indent=1, default=str)
    # Paths relative to the repository: results are committed, machine paths are not.
    (out / "compile_vs_gpu.json").write_text(dump.replace(str(ROOT) + "/", ""), encoding="utf-8")
    return 0 if rows and all(r["match"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
