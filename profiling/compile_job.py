"""Compile-backed insight without a GPU: the API the server and the CLI use.

    result = compile_file("kernels.py", target="sm_90")     # dict, JSON-serialisable
    findings = findings_from(result)                         # TL101…TL106
    ir = show_ir("kernels.py", "matmul_kernel", "ptx", source_line=42)

Where configurations come from: the launches the capture job records while the file's harness
(`tritonlens_cases()`, tests or `__main__` block) runs in the interpreter on the CPU — real dtypes,
alignments and scalar values — expanded by the worker over a kernel's autotune configs; or explicit
`configs` from the caller. A kernel no captured launch reached (no harness, or a harness that raised
first) falls back to the static model's configurations (static_configs.py: literal launch sites,
autotune configs, assumed argument types), marked "source": "static" with an "assumed" list.
The cross-compile itself runs in a worker process, never here.

Caching: a whole-file answer is kept under ${XDG_CACHE_HOME:-~/.cache}/tritonlens/compile keyed by the
file's text, the configurations, the target and the Triton version, so an unchanged file costs a
file read; below it the worker keeps one entry per compiled kernel configuration keyed by (kernel
source hash incl. its helpers, signature + specialisation, constexprs, options, target, Triton
version), so editing one kernel recompiles only that kernel.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from tritonlens.profiling import ptx_facts
from tritonlens.profiling.occupancy import limits_for, occupancy

RESULT_FORMAT = 1
STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")
# What a compile brings back: SASS only for spilling kernels (per-line spill traffic); Show IR
# disassembles the cubin on demand for the others.
ARTIFACTS = ("ttir", "ttgir", "llir", "ptx", "sass?", "cubin")
LANGUAGES = {"ttir": "mlir", "ttgir": "mlir", "llir": "llvm", "ptx": "ptx", "sass": "sass"}
_ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
             "int32": 4, "int64": 8, "bool": 1, "float8_e4m3fn": 1, "float8_e5m2": 1, "uint16": 2,
             "uint32": 4, "uint64": 8, "complex64": 8}


class CompileError(RuntimeError):
    """The compile could not run at all (worker failed, bad input); per-kernel compile errors
    are data in the result, not exceptions."""


class CompileCancelled(CompileError):
    pass


def cache_root() -> Path:
    env = os.environ.get("TRITONLENS_COMPILE_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tritonlens" / "compile"


# ---------------------------------------------------------------------------------------------
# Workers: one long-lived compile worker per interpreter (importing triton costs ~1 s).

_clients: dict = {}
_clients_lock = threading.Lock()
_versions: dict = {}
STATS = {"worker_jobs": 0, "capture_jobs": 0, "file_cache_hits": 0}  # for tests and benchmarks


def _client(python: str | None):
    from tritonlens.profiling.client import WorkerClient

    key = python or sys.executable
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            # TRITON_INTERPRET must not leak in: the compile worker needs real JITFunctions.
            client = WorkerClient(python=python, timeout=600, env={"TRITON_INTERPRET": "0"})
            _clients[key] = client
        return client


def warm_up(python: str | None = None) -> None:
    """Start the compile worker and load Triton in it now (the server calls this at start-up), so
    that the first save costs a compile, not an interpreter start."""
    _run(_client(python), {"kind": "compile", "warmup": True}, None, 120)


def shutdown() -> None:
    """Stop the compile workers (the server calls this on exit)."""
    with _clients_lock:
        for client in _clients.values():
            client.close()
        _clients.clear()


def triton_version(python: str | None = None) -> str:
    """The Triton version of the interpreter that compiles, without importing triton here."""
    key = python or sys.executable
    if key not in _versions:
        if python is None or os.path.realpath(python) == os.path.realpath(sys.executable):
            from importlib.metadata import PackageNotFoundError, version

            try:
                _versions[key] = version("triton")
            except PackageNotFoundError:
                _versions[key] = "none"
        else:
            code = ("import importlib.metadata as m\ntry: print(m.version('triton'))\n"
                    "except m.PackageNotFoundError: print('none')")
            out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, check=False)
            _versions[key] = out.stdout.strip() or "none"
    return _versions[key]


def _run(client, job: dict, cancel, timeout: float) -> dict:
    reply = client.run(job, timeout=timeout, cancel=cancel)
    if reply.get("ok"):
        return reply["result"]
    err = reply.get("error") or {}
    if err.get("type") == "cancelled":
        raise CompileCancelled(err.get("message", "cancelled"))
    raise CompileError(f"{job['kind']} job failed ({err.get('type')}): {err.get('message')}\n"
                       f"{err.get('traceback') or err.get('stderr') or ''}".rstrip())


# ---------------------------------------------------------------------------------------------
# Configurations from captured launches


def configs_from_launches(launches: list[dict]) -> dict[str, list[dict]]:
    """Captured-launch descriptors (capture job) → the compile job's CONFIGs per kernel."""
    out: dict[str, list[dict]] = {}
    for d in launches:
        args = {}
        for a in d.get("args", []):
            kind, name = a.get("kind"), a.get("name")
            if kind == "tensor":
                # A CUDA allocation is 256-byte aligned: only the view's offset decides whether the
                # JIT sees a 16-byte aligned pointer.
                dtype = a.get("storage_dtype") or a.get("dtype")
                itemsize = _ITEMSIZE.get(str(a.get("dtype")), 4)
                args[name] = {"kind": "tensor", "dtype": dtype,
                              "data_ptr": int(a.get("storage_offset") or 0) * itemsize}
                if a.get("dtype") and a.get("storage_dtype"):
                    args[name]["dtype"] = a["dtype"]
            elif kind == "scalar":
                args[name] = {"kind": a.get("type", "int"), "value": a.get("value")}
            elif kind == "constexpr":
                args[name] = {"kind": "constexpr", "value": a.get("value")}
            elif kind == "none":
                args[name] = {"kind": "none"}
            # "other" / "missing": left out; the worker fills defaults or reports what is missing
        options = {k: v for k, v in (d.get("options") or {}).items() if k in ("num_warps", "num_stages", "num_ctas",
                                                                           "maxnreg")}
        for k in ("num_warps", "num_stages"):
            if d.get(k) is not None:
                options[k] = d[k]
        grid = "×".join(str(g) for g in (d.get("grid") or []))
        label = f"launch of case {d.get('case', 0)}" + (f", grid {grid}" if grid else "")
        out.setdefault(d["kernel"], []).append(
            {"label": label, "args": args, "options": options, "autotuned": bool(d.get("autotuned"))})
    return out


def capture_launches(path: str, kernel: str | None, python: str | None, cancel, timeout: float = 300,
                     max_cases: int | None = None) -> dict:
    """Run the file's harness in a fresh worker (interpreter mode on a CPU) and return its result."""
    from tritonlens.profiling.client import WorkerClient

    STATS["capture_jobs"] += 1
    client = WorkerClient(python=python, timeout=timeout)
    try:
        job = {"kind": "capture", "path": path}
        if kernel:
            job["kernel"] = kernel
        if max_cases:
            job["max_cases"] = max_cases
        return _run(client, job, cancel, timeout)
    finally:
        client.close()


# ---------------------------------------------------------------------------------------------
# The API


def compile_file(path, text: str | None = None, kernel: str | None = None, target: str = "sm_90",
                 python: str | None = None, cancel: threading.Event | None = None,
                 configs: dict[str, list[dict]] | None = None, use_cache: bool = True,
                 timeout: float = 600, max_cases: int | None = None) -> dict:
    """Cross-compile the file's kernels for `target`; returns
    {"path", "target", "triton_version", "kernels": [KERNEL], "error", "cached", "source"} with
    KERNEL = {"name", "line", "configs": [FACTS], "lines": [{"line", "instructions", "spill_bytes"}],
    "error"} (see `_facts` for FACTS).

    configs: {kernel name: [CONFIG]} (job_compile's format) instead of capturing launches.
    cancel: a threading.Event; setting it kills the worker and raises CompileCancelled.
    max_cases: capture only the first N harness cases (the first is the performance shape).
    """
    path = os.path.abspath(str(path))
    if text is None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CompileError(f"cannot read {path}: {exc}") from exc
    limits_for(target)  # unknown targets fail here, before any work
    version = triton_version(python)
    if version == "none":
        raise CompileError(f"triton is not installed in {python or sys.executable}")
    key_src = json.dumps([RESULT_FORMAT, path, text, kernel, target, version, configs, max_cases,
                          python or sys.executable],
                         sort_keys=True, default=str)
    file_key = hashlib.sha256(key_src.encode()).hexdigest()[:32]
    root = cache_root()
    cached_path = root / "files" / file_key[:2] / f"{file_key}.json"
    if use_cache:
        try:
            result = json.loads(cached_path.read_text(encoding="utf-8"))
            result["cached"] = True
            STATS["file_cache_hits"] += 1
            return result
        except (OSError, ValueError):
            pass

    source = "configs"
    capture_errors: list = []
    static_info: dict[str, dict] = {}
    if configs is None:
        try:
            captured = capture_launches(path, kernel, python, cancel, timeout=min(timeout, 300),
                                        max_cases=max_cases)
        except CompileCancelled:
            raise
        except CompileError as exc:  # the harness run itself broke: the static model still has configs
            captured = {"launches": [], "source": None, "errors": [f"capturing launches failed: {exc}"]}
        configs = configs_from_launches(captured.get("launches") or [])
        source = f"captured launches ({captured.get('source')})" if captured.get("source") else "static model"
        capture_errors = list(captured.get("errors") or [])
        for case in captured.get("cases") or []:
            if isinstance(case, dict) and case.get("error"):
                capture_errors.append(case["error"])
        # Kernels no captured launch reached: configurations from literal launch sites and
        # autotune configs, with conservative stand-ins for the arguments nobody captured.
        extra, static_info = _static_fallback(text, kernel, set(configs), capture_errors)
        configs.update(extra)
        if extra and configs.keys() == extra.keys():
            source = "static model"
    if kernel:
        configs = {k: v for k, v in configs.items() if k == kernel}

    job = {"kind": "compile", "path": path, "text": text, "target": target, "artifacts": list(ARTIFACTS),
           "cache_dir": str(root / "configs"),
           "kernels": [{"name": name, "configs": cfgs} for name, cfgs in configs.items()]}
    reply = _compile_job(job, python, cancel, timeout) if job["kernels"] else {
        "triton_version": version, "kernels": [], "error": None}

    result = {"path": path, "target": target, "triton_version": reply.get("triton_version", version),
              "kernels": [], "error": reply.get("error"), "cached": False, "source": source,
              "capture_errors": [str(e)[:500] for e in capture_errors][:5]}
    for k in reply.get("kernels", []):
        result["kernels"].append(_kernel_facts(k, path, target, root))
    _mark_sources(result, job, static_info, capture_errors, "configs" if source == "configs" else "captured")
    _add_vector_whatifs(result, job, python, cancel, timeout, root)
    if use_cache:
        _write_json(cached_path, result)
    return result


def _static_fallback(text: str, kernel: str | None, captured: set[str], errors: list) -> tuple[dict, dict]:
    from tritonlens.profiling.static_configs import static_configs

    try:
        return static_configs(text, {kernel} if kernel else None, skip=captured)
    except Exception as exc:  # noqa: BLE001 - the fallback must never cost the captured facts
        errors.append(f"static configurations failed: {type(exc).__name__}: {exc}")
        return {}, {}


def _spec_for(kspec: dict, label: str | None) -> dict | None:
    """The CONFIG a compiled config came from (the worker appends autotune details to labels)."""
    cfgs = kspec.get("configs") or []
    return next((c for c in cfgs if c.get("label") == label), None) or \
        next((c for c in cfgs if label and label.startswith(str(c.get("label")) + ",")), None)


def _mark_sources(result: dict, job: dict, static_info: dict, capture_errors: list, default: str) -> None:
    """Say where every configuration came from: "captured" (or "configs" from the caller) or
    "static", the latter with the assumptions its arguments rest on; kernels the static model could
    not configure either get an entry with a note, so the hover says why nothing compiled."""
    why = ""
    if capture_errors:
        why = f" (the harness raised before launching it: {str(capture_errors[0])[:300]})"
    specs = {k["name"]: k for k in job["kernels"]}
    for k in result["kernels"]:
        kspec = specs.get(k["name"]) or {}
        static = k["name"] in static_info
        k["source"] = "static" if static else default
        if static:
            k["note"] = (f"no launch of {k['name']} was captured{why}; compiled from the static model's "
                         "configurations with assumed arguments")
        for facts in k["configs"]:
            spec = _spec_for(kspec, facts.get("label")) or {}
            facts["source"] = spec.get("source", default)
            facts["assumed"] = list(spec.get("assumed") or [])
    present = {k["name"] for k in result["kernels"]}
    for name, entry in static_info.items():
        if name in present or not entry.get("note"):
            continue
        result["kernels"].append({"name": name, "line": entry.get("line"), "configs": [], "lines": [], "error": None,
                                  "source": "static",
                                  "note": f"no launch of {name} was captured{why}; {entry['note']}: nothing compiled"})


def _compile_job(job, python, cancel, timeout) -> dict:
    STATS["worker_jobs"] += 1
    return _run(_client(python), job, cancel, timeout)


def _write_json(path: Path, obj) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(obj), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def _kernel_facts(k: dict, path: str, target: str, root: Path) -> dict:
    out = {"name": k["name"], "line": k.get("line"), "configs": [], "lines": [], "error": k.get("error")}
    seen = {}
    for cfg in k.get("configs", []):
        key = cfg.get("key")
        if key and key in seen:  # the same specialisation launched twice: one compile, two labels
            seen[key]["labels"].append(cfg.get("label"))
            continue
        facts = _facts(cfg, path, target, root)
        if key:
            seen[key] = facts
        out["configs"].append(facts)
    first = next((c for c in out["configs"] if not c.get("error")), None)
    if first:
        out["lines"] = first["lines"]
    return out


def _facts(cfg: dict, path: str, target: str, root: Path) -> dict:
    """FACTS = the CLI's per-config fields plus detail: {"label", "labels", "constexprs", "num_warps",
    "num_stages", "registers", "spill_bytes", "stack_bytes", "shared_bytes", "occupancy" (percent),
    "blocks_per_sm", "warps_per_sm", "limiter", "mma", "dots", "pipelined", "pipeline", "vectorized",
    "loads", "lines", "error", "signature", "specialization", "key", "cached", "compile_s"}."""
    f = {"label": cfg.get("label"), "labels": [cfg.get("label")], "constexprs": cfg.get("constexprs", {}),
         "num_warps": cfg.get("num_warps"), "num_stages": cfg.get("num_stages"), "registers": None,
         "spill_bytes": None, "stack_bytes": None, "shared_bytes": None, "occupancy": None,
         "blocks_per_sm": None, "warps_per_sm": None, "limiter": None, "mma": None, "dots": [],
         "pipelined": None, "pipeline": None, "vectorized": None, "loads": [], "lines": [],
         "error": cfg.get("error"), "signature": cfg.get("signature"), "specialization": cfg.get("specialization"),
         "key": cfg.get("key"), "cached": cfg.get("cached"), "compile_s": cfg.get("compile_s"),
         "args": cfg.get("args")}
    if cfg.get("error") or "registers" not in cfg:
        return f
    arts = cfg.get("artifacts") or {}
    # A cached artifact may name another file holding the same kernel source.
    path = ptx_facts.source_path_in(arts.get("ptx") or arts.get("ttgir") or "", path)
    if f["key"]:
        for stage, text in arts.items():
            p = root / "ir" / f["key"][:2] / f["key"] / stage
            if not p.exists():
                _write_text(p, text)
    f["registers"] = cfg["registers"]
    f["stack_bytes"] = cfg.get("stack_bytes", 0)
    # What cuFuncGetAttribute(LOCAL_SIZE_BYTES) reports on the GPU (Triton's n_spills × 4): the
    # per-thread local memory, which for a Triton kernel is its spill stack.
    f["spill_bytes"] = max(cfg.get("stack_bytes", 0), cfg.get("local_bytes", 0))
    f["shared_bytes"] = cfg.get("shared_bytes", 0)
    occ = occupancy(target, cfg["registers"], f["shared_bytes"], cfg.get("num_warps") or 4)
    f.update(occupancy=occ.occupancy, blocks_per_sm=occ.blocks_per_sm, warps_per_sm=occ.warps_per_sm,
             limiter=occ.limiter)
    if "ttgir" in arts:
        dl = ptx_facts.dots(arts["ttgir"], path)
        f["dots"] = [d.as_dict() for d in dl]
        f["mma"] = ptx_facts.mma_summary(dl)
    if "ptx" in arts:
        loads = ptx_facts.global_loads(arts["ptx"], path)
        f["pipeline"] = ptx_facts.pipelining(loads)
        f["pipelined"] = None if f["pipeline"] is None else f["pipeline"] != "none"
        f["vectorized"] = ptx_facts.vectorized(loads)
        f["loads"] = [{"line": ln, "widest": s["widest"], "narrowest": s["narrowest"],
                       "instructions": s["instructions"], "kinds": sorted(s["kinds"])}
                      for ln, s in sorted(loads.items())]
    # Instructions per line from the PTX (.loc); spill traffic per line from the SASS, which exists
    # only when ptxas spilled.
    counts = ptx_facts.ptx_line_stats(arts["ptx"], path) if "ptx" in arts else {}
    spills = {}
    if "sass" in arts:
        phantoms = ptx_facts.inline_asm_phantoms(arts["ptx"], path) if "ptx" in arts else None
        spills = {ln: s["spill_bytes"] for ln, s in ptx_facts.sass_line_stats(arts["sass"], path, phantoms).items()}
    f["lines"] = [{"line": ln, "instructions": counts.get(ln, 0), "spill_bytes": spills.get(ln, 0)}
                  for ln in sorted(set(counts) | {ln for ln, b in spills.items() if b})]
    return f


# ---------------------------------------------------------------------------------------------
# TL106's evidence: would the loads be vectorised if the arguments were divisible by 16?


def _whatif_args(cfg: dict, facts: dict) -> tuple[dict, list[str]] | None:
    spec = facts.get("specialization") or {}
    sig = facts.get("signature") or {}
    args = dict(cfg.get("args") or {})
    changed = []
    for name, flag in spec.items():
        a = args.get(name)
        if flag != "" or a is None:
            continue
        if a.get("kind") in ("tensor", "pointer") and sig.get(name, "").startswith("*"):
            args[name] = {**a, "data_ptr": 0}
            changed.append(name)
        elif a.get("kind") == "int" and sig.get(name, "").startswith(("i", "u")):
            v = int(a["value"])
            args[name] = {**a, "value": max(16, -(-v // 16) * 16)}
            changed.append(name)
    return (args, changed) if changed else None


def _add_vector_whatifs(result, job, python, cancel, timeout, root) -> None:
    requests, where = [], []
    for kspec, kfacts in zip(job["kernels"], result["kernels"]):
        by_label = {c.get("label"): c for c in kspec["configs"]}
        for facts in kfacts["configs"]:
            narrow = [ld for ld in facts.get("loads") or [] if ld["widest"] <= 4 and "tma" not in ld["kinds"]]
            if facts.get("error") or not narrow or facts.get("source") == "static":
                continue  # static: the integers are plain by assumption, not evidence of a missed specialisation
            cfg = by_label.get(facts["label"])
            if cfg is None:
                # autotune-expanded labels: match the launch they came from
                cfg = next((c for c in kspec["configs"] if facts["label"].startswith(c.get("label", "\0"))), None)
            if cfg is None:
                continue
            w = _whatif_args({**cfg, "args": {**(cfg.get("args") or {}), **_constexpr_args(facts)}}, facts)
            if not w:
                continue
            args, changed = w
            requests.append({"name": kfacts["name"], "configs": [
                {"label": facts["label"] + " (what-if: divisible by 16)", "args": args,
                 "options": {"num_warps": facts["num_warps"], "num_stages": facts["num_stages"]}}]})
            where.append((facts, changed, [ld["line"] for ld in narrow]))
    if not requests:
        return
    job = {**job, "kernels": requests, "artifacts": ["ptx"]}
    try:
        reply = _compile_job(job, python, cancel, timeout)
    except CompileCancelled:
        raise
    except CompileError:
        return  # the evidence is optional; the main facts stand
    for (facts, changed, lines), k in zip(where, reply.get("kernels", [])):
        cfg = (k.get("configs") or [None])[0]
        if not cfg or cfg.get("error") or "ptx" not in (cfg.get("artifacts") or {}):
            continue
        ptx = cfg["artifacts"]["ptx"]
        loads = ptx_facts.global_loads(ptx, ptx_facts.source_path_in(ptx, result["path"]))
        better = [{"line": ln, "bytes": facts_w, "could_be": loads[ln]["widest"]}
                  for ln, facts_w in ((ld["line"], ld["widest"]) for ld in facts["loads"] if ld["line"] in lines)
                  if ln in loads and loads[ln]["widest"] > facts_w]
        if better:
            facts["vector_whatif"] = {"arguments": changed, "lines": better}


def _constexpr_args(facts: dict) -> dict:
    return {k: {"kind": "constexpr", "value": v} for k, v in (facts.get("constexprs") or {}).items()}


# ---------------------------------------------------------------------------------------------
# Show IR


def ir_text(result: dict, kernel: str, stage: str, config: int = 0, python: str | None = None,
            cancel: threading.Event | None = None) -> tuple[str, dict]:
    if stage not in STAGES:
        raise CompileError(f"unknown IR stage {stage!r}; choose from {', '.join(STAGES)}")
    k = next((k for k in result["kernels"] if k["name"] == kernel), None)
    if k is None:
        names = ", ".join(k["name"] for k in result["kernels"]) or "none"
        raise CompileError(f"no compiled kernel {kernel!r} (compiled: {names})")
    ok = [c for c in k["configs"] if not c.get("error") and c.get("key")]
    if not ok:
        errs = [c["error"]["message"] for c in k["configs"] if c.get("error")]
        raise CompileError(f"{kernel} did not compile" + (f": {errs[0]}" if errs else ""))
    facts = ok[min(config, len(ok) - 1)]
    folder = cache_root() / "ir" / facts["key"][:2] / facts["key"]
    p = folder / stage
    if stage == "sass" and not p.exists() and (folder / "cubin").exists():
        reply = _run(_client(python), {"kind": "compile", "disassemble": (folder / "cubin").read_text()}, cancel, 120)
        _write_text(p, reply["sass"])
    try:
        return p.read_text(encoding="utf-8"), facts
    except OSError as exc:
        raise CompileError(f"{stage} of {kernel} is not in the cache ({exc})") from exc


def _write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def show_ir(path, kernel: str, stage: str, source_line: int | None = None, text: str | None = None,
            target: str = "sm_90", python: str | None = None, config: int = 0,
            cancel: threading.Event | None = None, configs: dict | None = None, line: int | None = None) -> dict:
    """{"text", "marked_lines", "language", "line_map", "config"}: the IR of one compiled
    configuration; marked_lines are the 0-based IR lines that belong to `source_line` (1-based;
    `line` is the same, as the server's showIr command names it) and line_map gives the source
    line (1-based or null) of every IR line."""
    if source_line is None:
        source_line = line
    result = compile_file(path, text=text, kernel=kernel, target=target, python=python, cancel=cancel,
                          configs=configs)
    try:
        ir, facts = ir_text(result, kernel, stage, config, python, cancel)
    except CompileError:
        if not result.get("cached"):
            raise
        result = compile_file(path, text=text, kernel=kernel, target=target, python=python, cancel=cancel,
                              configs=configs, use_cache=False)  # the IR files were removed under the cached answer
        ir, facts = ir_text(result, kernel, stage, config, python, cancel)
    ptx = None
    if stage == "sass":
        try:
            ptx = ir_text(result, kernel, "ptx", config)[0]
        except CompileError:
            ptx = None
    lmap = ptx_facts.line_map(stage, ir, result["path"], ptx)
    marked = [i for i, ln in enumerate(lmap) if source_line is not None and ln == source_line]
    return {"text": ir, "marked_lines": marked, "language": LANGUAGES[stage], "line_map": lmap,
            "config": facts.get("label")}


def findings_from(result: dict, text: str | None = None):
    from tritonlens.profiling.compile_findings import findings_from as _ff

    return _ff(result, text)

