"""Replay of a captured launch (a capture.LaunchRecord) on fresh tensors with the same dtype, shape,
strides, offset and aliasing: floating-point data random, integer tensors keep the captured values
(they are usually indices), every written buffer cloned before the launch.

A launch read back from the project's records (JSON, no captured values) has no snapshot: its
integer tensors are filled with values in [0, m), m the smallest dimension of the launch's tensor
arguments, so each value indexes any dimension of any of them. Offsets-style tensors (cu_seqlens)
then hold arbitrary small values, not a monotone sequence: a kernel reading them sees short or
empty segments, never an out-of-range index. A table of memory addresses (capture marks it) is not
replayed from records at all: small values as pointers would fault the GPU."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from capture import LaunchRecord

def _torch_dtype(name: str):
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {name!r}")  # noqa: TRY004 - a bad name in a record
    return dtype


def constexpr_value(value):
    """A recorded constexpr as the kernel expects it: a Triton or torch dtype is recorded by its name
    ("bf16", "torch.bfloat16"), and a kernel calling `.to(X_dtype)` needs the dtype itself."""
    if not isinstance(value, str):
        return value
    if value.startswith("torch.") and isinstance(getattr(torch, value[6:], None), torch.dtype):
        return getattr(torch, value[6:])
    import triton.language as tl

    found = next((v for v in vars(tl).values() if isinstance(v, tl.dtype) and str(v) == value), None)
    return value if found is None else found


def _needed_elements(shape, strides, offset) -> int:
    if any(s == 0 for s in shape):
        return offset
    return offset + sum((s - 1) * st for s, st in zip(shape, strides)) + 1


def safe_index_bound(desc: dict) -> int:
    """m: the smallest dimension (at least 1) of the launch's tensor arguments."""
    dims = [s for d in desc["args"] if d["kind"] == "tensor" for s in d["shape"] if s > 0]
    return max(1, min(dims, default=1))


def _fill(buf: torch.Tensor, generator, int_high: int = 64) -> None:
    if buf.dtype.is_floating_point:
        if buf.element_size() == 1:  # fp8 types: no randn; draw in fp32 and convert
            buf.copy_(torch.randn(buf.shape, generator=generator, device=buf.device).to(buf.dtype))
        else:
            buf.normal_(generator=generator)
    elif buf.dtype == torch.bool:
        buf.copy_(torch.randint(0, 2, buf.shape, generator=generator, device=buf.device).bool())
    elif buf.dtype.is_complex:
        buf.normal_(generator=generator)
    else:
        buf.copy_(torch.randint(0, int_high, buf.shape, generator=generator, device=buf.device).to(buf.dtype))


def build_args(record: LaunchRecord, device: str | None = None, seed: int = 0) -> dict:
    """Fresh tensors with the captured layout (shapes, strides, offsets, aliasing, dtypes).

    Floating-point data is drawn at random; integer tensors get the values seen at capture,
    because they are usually indices or offsets that must stay in range (without a snapshot:
    values in [0, safe_index_bound)).
    """
    desc = record.descriptor
    int_high = safe_index_bound(desc)
    values: dict = {}
    bases: dict = {}
    gen_device = None
    for d in desc["args"]:
        kind = d["kind"]
        name = d["name"]
        if kind == "constexpr":
            values[name] = constexpr_value(d["value"])
        elif kind == "scalar":
            values[name] = d["value"]
        elif kind == "none":
            values[name] = None
        elif kind == "tensor":
            if d.get("addresses") and name not in record.snapshots:
                raise ValueError(f"{name} is a table of memory addresses (pointers to tensors the launch does not "
                                 "pass), which a replay on fresh tensors cannot rebuild; profile this kernel with a "
                                 "harness that builds the table (tritonlens_cases)")
            dev = device or d["device"]
            dtype = _torch_dtype(d.get("storage_dtype") or d["dtype"])
            need = _needed_elements(d["shape"], d["strides"], d["storage_offset"])
            alias = d.get("alias_of")
            if alias is not None and alias in bases and bases[alias].dtype == dtype:
                base = bases[alias]
                if base.numel() < need:
                    raise ValueError(f"aliased buffer {name} outgrows {alias}")
            else:
                # one allocation spanning every view of this storage
                span = max([need] + [_needed_elements(o["shape"], o["strides"], o["storage_offset"])
                                     for o in desc["args"] if o.get("alias_of") == name])
                base = torch.empty(span, dtype=dtype, device=dev)
                if gen_device != base.device:
                    generator = torch.Generator(device=base.device).manual_seed(seed)
                    gen_device = base.device
                _fill(base, generator, int_high)
            bases[name] = base
            t = base.as_strided(d["shape"], d["strides"], d["storage_offset"])
            snap = record.snapshots.get(name)
            if snap is not None and snap.shape == t.shape:
                t.copy_(snap)
            if d.get("storage_dtype"):
                import triton  # imported by now: the capture that made the record set the mode up

                t = triton.reinterpret(t, getattr(triton.language, d["dtype"]))
            values[name] = t
        else:
            raise ValueError(f"cannot replay argument {name!r} of kind {kind!r}")
    return values


def launch_fn(record: LaunchRecord, values: dict):
    """A zero-argument callable that performs exactly the captured launch on `values`."""
    desc = record.descriptor
    kernel = record.kernel
    grid = tuple(desc["grid"])
    kwargs = dict(values)
    kwargs.update(desc["options"])
    run = kernel.run

    def launch():
        return run(grid=grid, warmup=False, **kwargs)

    return launch


def replay(record: LaunchRecord, seed: int = 0, values: dict | None = None):
    """Replay once on fresh data. Written buffers are cloned first, so `values` stay pristine."""
    values = build_args(record, seed=seed) if values is None else values
    written = set(record.descriptor["written"])
    run_values = {k: (v.clone() if k in written and isinstance(v, torch.Tensor) else v) for k, v in values.items()}
    launch_fn(record, run_values)()
    return values, run_values
