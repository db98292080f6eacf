"""The worker protocol's messages, each JSON shape described once, here (the reports built from
them are reports.py's, on the same machinery).

One JSON line each way: the worker greets with `Hello`, then reads one job per line (`LaunchJob`,
`VerifyJob`, `CompileJob`, or a bare `Job` such as {"kind": "info"}) and answers each with a
`Reply` whose `result` is the job kind's result object (`BenchResult` for "bench").

Standard library only: this folder is shipped as plain files to remote interpreters (ssh, Ray),
where tritonlens is not installed. Reading and writing: json_message.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

try:  # imported as tritonlens.profiling.worker.messages
    from .compile_report import CompileFailure
    from .frontend_report import FrontendKernel, FrontendResult
    from .json_message import NONE, OPT_STR, Message, MessageError, json_field
    from .line_profile import LineProfile
    from .ncu_result import NcuResult
    from .verify_messages import CandidateError, Check, Evidence, PhaseTimes, Precompiled, VerifyResult
    from .worker_error import ERROR_TYPES, WorkerError
except ImportError:  # a plain file in the worker folder
    from compile_report import CompileFailure
    from frontend_report import FrontendKernel, FrontendResult
    from json_message import NONE, OPT_STR, Message, MessageError, json_field
    from line_profile import LineProfile
    from ncu_result import NcuResult
    from verify_messages import CandidateError, Check, Evidence, PhaseTimes, Precompiled, VerifyResult
    from worker_error import ERROR_TYPES, WorkerError

__all__ = ["ERROR_TYPES", "CandidateError", "Check", "Evidence", "FrontendResult", "MessageError", "NcuResult",
           "PhaseTimes", "Precompiled", "VerifyResult", "WorkerError"]  # re-exported: the protocol's names

PROTOCOL = 1


# -- the protocol's envelope ---------------------------------------------------------------------
@dataclass
class Hello(Message):
    """The worker's first line: {"hello": {...}}."""

    protocol: int = json_field(int)
    pid: int = json_field(int)
    python: str = json_field(str, "")
    version: str = json_field(str, "")
    cwd: str = json_field(str, "")


@dataclass
class RelayHello(Message):
    """The first line of the relay an ssh session runs: {"hello": {...}}."""

    relay: int = json_field(int)
    host: str = json_field(str, "")
    root: str = json_field(str, "")


@dataclass
class Reply(Message):
    """One answer per job; `result` is the job kind's result object (a JSON object)."""

    drop_none: ClassVar[bool] = True

    id: str | None = json_field(OPT_STR)
    ok: bool = json_field(bool)
    result: dict | None = json_field((dict, NONE), None)
    error: WorkerError | None = json_field(of=WorkerError, default=None)
    fatal: bool = json_field(bool, False)
    sandbox: list | None = json_field((list, NONE), None)  # what the job tried and the sandbox refused
    host: str | None = json_field(OPT_STR, None)  # remote backends: where it ran
    retried: dict | None = json_field((dict, NONE), None)  # ssh: the first attempt's lost connection

    @classmethod
    def failure(cls, job_id, etype: str, message: str, **more) -> Reply:
        return cls(id=job_id, ok=False, error=WorkerError(etype, message, **{k: v for k, v in more.items() if v}))


# -- a recorded launch (capture results, launch records, record cases) -----------------------
@dataclass
class LaunchArg(Message):
    """One argument of a captured launch. kind: tensor | scalar (`type` int/float/bool) |
    constexpr | none | other (`repr`; not replayable) | missing."""

    keep_more: ClassVar[bool] = True
    name: str = json_field(str)
    kind: str = json_field(str)
    dtype: str | None = json_field(OPT_STR, None)
    storage_dtype: str | None = json_field(OPT_STR, None)  # a triton.reinterpret-ed tensor's own dtype
    shape: list | None = json_field((list, NONE), None)
    strides: list | None = json_field((list, NONE), None)
    storage_offset: int = json_field(int, 0)
    alias_of: str | None = json_field(OPT_STR, None)  # the earlier argument sharing this tensor's storage
    written: bool = json_field(bool, False)
    type: str | None = json_field(OPT_STR, None)
    value: Any = json_field(object, None)
    more: dict = field(default_factory=dict)  # device, repr


@dataclass
class LaunchDescriptor(Message):
    """One distinct launch signature a capture saw (repeats only bump `count`); launches the
    autotuner makes while it benchmarks are not recorded, its chosen config's is (`autotuned`).

    `key` hashes the signature (kernel, layouts, scalar values, constexprs, grid, options);
    `source_hash` the kernel's source. `written` names the tensors whose contents changed across
    the first launch (compared on a copy) or that the source stores to (`written_by` says which);
    `bytes` is the minimum traffic: tensors read (not written, or also loaded) and written. `case`
    is the harness case that first made it (0: the performance case). num_warps / num_stages come
    from the compiled kernel on a GPU, from the launch options or Triton's defaults otherwise."""

    keep_more: ClassVar[bool] = True
    kernel: str = json_field(str)
    key: str = json_field(str, "")
    source_hash: str = json_field(str, "")
    case: int | None = json_field((int, NONE), 0)  # null: launched outside any harness entry
    count: int = json_field(int, 1)
    autotuned: bool = json_field(bool, False)
    grid: list = json_field(list, factory=list)
    num_warps: int | None = json_field((int, NONE), None)
    num_stages: int | None = json_field((int, NONE), None)
    constexprs: dict = json_field(dict, factory=dict)
    options: dict = json_field(dict, factory=dict)  # launch keyword options as the caller passed them
    args: list = json_field(of=LaunchArg, many=True, factory=list)
    more: dict = field(default_factory=dict)  # file, qualname, def_line, mode, written, written_by, bytes


# -- jobs -----------------------------------------------------------------------------------------
@dataclass
class Job(Message):
    """What every job carries. The relay also reads "timeout" and "files" ({relative path: text})
    off a job; any top-level string starting with "@bundle/" names a shipped file."""

    drop_none: ClassVar[bool] = True
    keep_more: ClassVar[bool] = True

    kind: str = json_field(str)
    id: str | None = json_field(OPT_STR, None)
    cache_dir: str | None = json_field(OPT_STR, None)  # a folder the sandbox lets the job write
    more: dict = field(default_factory=dict)  # the fields of a kind with no type here


@dataclass
class LaunchJob(Job):
    """Kinds "capture", "run", "bench", "ncu" and "lines": run the file's harness and look at its launches.

    Harness order: `harness`, the file's `tritonlens_cases()`, its launch `records` (replayed on
    fresh data, the largest first), its argument-less `test_*` functions, its `__main__` block.
    Without a GPU the worker runs Triton's interpreter."""

    path: str = json_field(str, "")
    harness: str | None = json_field(OPT_STR, None)  # "file.py::function"
    kernel: str | None = json_field(OPT_STR, None)  # one kernel's launches only
    max_cases: int | None = json_field((int, NONE), None)
    # bench
    skip: list | None = json_field((list, NONE), None)  # ["<source_hash>:<key>"]: cached, not timed
    max_launches: int | None = json_field((int, NONE), None)  # per kernel, zero-config only (3)
    compare_bare: bool | None = json_field((bool, NONE), None)  # also time a bare do_bench(launch)
    refresh_ceilings: bool | None = json_field((bool, NONE), None)
    # ncu and lines
    key: str | None = json_field(OPT_STR, None)  # the launch to replay under Nsight Compute
    keep_csv: bool | None = json_field((bool, NONE), None)
    ncu: str | None = json_field(OPT_STR, None)  # the ncu binary
    ncu_timeout: float | None = json_field((int, float, NONE), None)
    # no harness and no tritonlens_cases(): the file's recorded launches, replayed as the cases
    records: list | None = json_field(of=LaunchDescriptor, many=True, default=None)
    sys_path: list | None = json_field((list, NONE), None)  # the project's import folders, for its package


@dataclass
class VerifyCandidate(Message):
    id: str = json_field(str)
    source: str = json_field(str)


@dataclass
class VerifyJob(Job):
    """Kind "verify": the original and candidate rewrites side by side (action "check"), or one
    quick check and one timing each (action "tune"), or only their kernels compiled ahead in parallel
    (action "precompile", verify_precompile.py). Cases: `harness`, else the original's
    tritonlens_cases(), else its launch `records` (kernel-level cases, no ragged shape)."""

    action: str = json_field(str, "check")
    name: str = json_field(str, "kernel")  # module stem: files are written as <cwd>/<tag>/<name>.py
    original: str = json_field(str, "")
    path: str | None = json_field(OPT_STR, None)
    origin_dir: str | None = json_field(OPT_STR, None)  # on sys.path, when it exists there, for sibling imports
    harness: str | None = json_field(OPT_STR, None)  # else the original's tritonlens_cases()
    candidates: list = json_field(of=VerifyCandidate, many=True, factory=list)
    seeds: int = json_field(int, 3)
    ragged: bool = json_field(bool, True)
    max_checks: int | None = json_field((int, NONE), None)
    timing: dict | None = json_field((dict, NONE), None)  # {"rounds": 7, "rep_ms": 40}; GPU only
    tune: dict | None = json_field((dict, NONE), None)  # {"rep_ms": 25}
    baseline: bool = json_field(bool, True)  # also time the original (check, GPU)
    # elements from which the largest case counts as the real size: checked on the first seed only
    real_size: int | None = json_field((int, NONE), None)  # None: the worker's default, 2^20
    # no harness and no tritonlens_cases(): the file's recorded launches, replayed as the cases
    records: list | None = json_field(of=LaunchDescriptor, many=True, default=None)
    sys_path: list | None = json_field((list, NONE), None)  # the project's import folders, for its package
    # seconds this job may spend on its candidates (the optimize's budget): those it cannot start in
    # time come back unrun, named, so the host keeps what was measured before the budget ran out
    deadline_s: float | None = json_field((int, float, NONE), None)


@dataclass
class CompileJob(Job):
    """Kind "compile": cross-compile a file's kernels for a GPU that need not be present.

    kernels: [{"name", "configs": [{"label", "args": {param: ARG}, "options": {...}}]}], where
    ARG is {"kind": "tensor", "dtype", "data_ptr" | "align"} | {"kind": "int" | "float" | "bool" |
    "constexpr" | "dtype", "value"} | {"kind": "none"}; a parameter left out takes its default,
    then an autotune config's or a heuristic's value. `warmup` imports Triton and nothing else;
    `disassemble` (a base64 cubin) answers {"sass"}."""

    path: str | None = json_field(OPT_STR, None)
    text: str | None = json_field(OPT_STR, None)
    target: str = json_field(str, "sm_90")  # "sm_NN[a]"
    kernels: list = json_field(list, factory=list)
    artifacts: list | None = json_field((list, NONE), None)  # ttir ttgir llir ptx sass sass? cubin
    warmup: bool = json_field(bool, False)
    disassemble: str | None = json_field(OPT_STR, None)
    # Answer only what the config cache holds; every other configuration is NOT_IN_CACHE (what is
    # left of a kernel whose job was killed past its time: the configurations it finished).
    cached_only: bool = json_field(bool, False)


NOT_IN_CACHE = "not compiled: its kernel's time ran out before this configuration was done"


@dataclass
class FrontendJob(Job):
    """Kind "frontend": lower kernels to TTIR from their standalone modules (never the user's module);
    the answer is a FrontendResult (frontend_report.py)."""

    target: str = json_field(str, "sm_90")
    kernels: list = json_field(of=FrontendKernel, many=True, factory=list)


LAUNCH_KINDS = ("capture", "run", "bench", "ncu", "lines")


def job_from_json(data: Any) -> Job:
    if not isinstance(data, dict):
        raise MessageError("job: expected a JSON object")
    kind = data.get("kind")
    cls = {"verify": VerifyJob, "compile": CompileJob, "frontend": FrontendJob}.get(kind, LaunchJob if kind in LAUNCH_KINDS else Job)
    return cls.from_json(data, f"{kind} job" if isinstance(kind, str) else "job")


# -- job results ---------------------------------------------------------------------------------
@dataclass
class Case(Message):
    index: int = json_field(int)
    label: str = json_field(str, "")
    ok: bool = json_field(bool, True)
    error: str | None = json_field(OPT_STR, None)


@dataclass
class CaptureResult(Message):
    """The "capture" job's result."""

    mode: str = json_field(str)  # gpu | interpreter
    source: str | None = json_field(OPT_STR, None)  # tritonlens_cases | harness | tests | main
    cases: list = json_field(of=Case, many=True, factory=list)
    launches: list = json_field(of=LaunchDescriptor, many=True, factory=list)
    total_launches: int = json_field(int, 0)
    errors: list = json_field(list, factory=list)


@dataclass
class LaunchProfile(Message):
    """One timed (or replayed) launch. Timings are null in the interpreter, never made up."""

    keep_more: ClassVar[bool] = True
    kernel: str = json_field(str, "")
    key: str | None = json_field(OPT_STR, None)  # the launch signature's hash
    source_hash: str | None = json_field(OPT_STR, None)
    grid: list | None = json_field((list, NONE), None)
    num_warps: int | None = json_field((int, NONE), None)
    num_stages: int | None = json_field((int, NONE), None)
    constexprs: dict | None = json_field((dict, NONE), None)
    time_ms: float | None = json_field((int, float, NONE), None)
    gbps: float | None = json_field((int, float, NONE), None)
    tflops: float | None = json_field((int, float, NONE), None)
    pct_of_peak: float | None = json_field((int, float, NONE), None)
    bound: str | None = json_field(OPT_STR, None)  # memory | compute | latency | underutilized
    registers: int | None = json_field((int, NONE), None)
    spills: int | None = json_field((int, NONE), None)
    shared_bytes: int | None = json_field((int, NONE), None)
    ncu: NcuResult | None = json_field(of=NcuResult, default=None)
    lines: LineProfile | None = json_field(of=LineProfile, default=None)  # stall samples per source line
    cached: bool = json_field(bool, False)  # the client had this launch's result; not timed again
    error: str | None = json_field(OPT_STR, None)
    more: dict = field(default_factory=dict)  # signature, flops, flops_source, bytes, timing details...

    def to_json(self) -> dict:
        out = super().to_json()
        if out["lines"] is None:  # sampled only when asked for: absent, as older reports have it
            del out["lines"]
        return out


@dataclass
class BenchResult(Message):
    """The "bench" job's result."""

    keep_more: ClassVar[bool] = True
    mode: str = json_field(str)  # gpu | interpreter
    source: str | None = json_field(OPT_STR, None)  # tritonlens_cases | harness | tests | main
    cases: list = json_field(of=Case, many=True, factory=list)
    device: dict | None = json_field((dict, NONE), None)  # the "info" job's result
    ceilings: dict | None = json_field((dict, NONE), None)  # null in the interpreter
    launches: list = json_field(of=LaunchProfile, many=True, factory=list)
    more: dict = field(default_factory=dict)  # descriptors, total_launches, errors


@dataclass
class CompiledConfig(Message):
    """One configuration of a compile job's kernel: what the compiler made of it, or its `error`.
    Resource fields are absent (null) when it did not compile."""

    keep_more: ClassVar[bool] = True
    label: str | None = json_field(OPT_STR, None)
    key: str | None = json_field(OPT_STR, None)  # hashes the specialisation: the worker's and the IR cache's
    constexprs: dict = json_field(dict, factory=dict)
    signature: dict | None = json_field((dict, NONE), None)
    specialization: dict | None = json_field((dict, NONE), None)
    options: dict | None = json_field((dict, NONE), None)
    num_warps: int | None = json_field((int, NONE), None)
    num_stages: int | None = json_field((int, NONE), None)
    registers: int | None = json_field((int, NONE), None)
    stack_bytes: int = json_field(int, 0)
    local_bytes: int = json_field(int, 0)
    shared_bytes: int = json_field(int, 0)
    artifacts: dict = json_field(dict, factory=dict)  # {stage: text}; the cubin base64
    cached: bool | None = json_field((bool, NONE), None)
    compile_s: float | None = json_field((int, float, NONE), None)
    error: CompileFailure | None = json_field(of=CompileFailure, default=None)
    more: dict = field(default_factory=dict)  # static_shared_bytes, tmem_bytes, args...


@dataclass
class CompiledKernel(Message):
    """One kernel of a compile job, one result per configuration it was asked for."""

    name: str = json_field(str)
    line: int | None = json_field((int, NONE), None)
    configs: list = json_field(of=CompiledConfig, many=True, factory=list)
    error: CompileFailure | None = json_field(of=CompileFailure, default=None)  # nothing compiled
    note: str | None = json_field(OPT_STR, None)  # decorators it was compiled without, and why


@dataclass
class CompileResult(Message):
    """The "compile" job's result."""

    keep_more: ClassVar[bool] = True
    target: str = json_field(str, "sm_90")
    triton_version: str | None = json_field(OPT_STR, None)
    kernels: list = json_field(of=CompiledKernel, many=True, factory=list)
    error: CompileFailure | None = json_field(of=CompileFailure, default=None)  # the module failed
    module_failures: list = json_field(list, factory=list)  # skipped top-level statements, "line 12: ..."
    more: dict = field(default_factory=dict)  # compile_calls
