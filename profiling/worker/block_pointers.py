"""Block pointers for a Triton that removed them, lowered as the Triton that had them did.

Standalone (stdlib + triton): shipped as a plain file beside job_compile.py, which compiles under
`emulated()`.

Triton 3.9 keeps `tl.make_block_ptr` and `tl.advance` only as stubs that raise, so every kernel
written for an earlier Triton with block pointers got no compile facts here. On NVIDIA targets
those Tritons never kept a block pointer to the end either: their RewriteTensorPointer pass, run
before any GPU-specific one, turned each into a tensor of pointers (`base + sum((offset_d +
arange(block_d)) * stride_d)`, in 64-bit) and each `boundary_check` into a mask (`0 <= index_d <
shape_d`), with `padding_option` as the load's `other`. `emulated()` builds exactly that in the
front end, so registers, spills and shared memory come from the same IR the older Triton fed its
backend. The kernel's facts carry a note saying so (`note_for`).
"""

from __future__ import annotations

import contextlib

_REMOVED = "have been removed"  # the stub's docstring in Triton 3.9: "Block pointers have been removed. ..."
NOTE = ("block pointers lowered to pointer tensors and masks, as Triton 3.8 and earlier compiled them "
        "(Triton {version} has no tl.make_block_ptr)")

_state: dict = {}


def _missing() -> bool:
    """Whether this Triton's make_block_ptr is the stub that raises (core's: tl's may be the stand-in now)."""
    from triton.language import core

    return _REMOVED in (getattr(getattr(core, "make_block_ptr", None), "__doc__", None) or "")


def _build(tl, core):
    """The stand-ins: (make_block_ptr, advance, load, store), built against this Triton's language."""

    # Annotations as objects, not strings (this module's `annotations` import): _aggregate reads them.
    fields = {"base": tl.tensor, "shape": tl.tuple, "strides": tl.tuple, "offsets": tl.tuple,
              "block_shape": tl.constexpr, "order": tl.constexpr}
    BlockPtr = core._aggregate(type("BlockPtr", (), {"__annotations__": fields, "__module__": __name__}))

    class BlockPtrType(core._aggregate_type):
        @property
        def element_ty(self):
            return dict(self.fields)["base"].element_ty

    # `p.dtype.element_ty` and `p.type.element_ty`, as kernels write to cast what they store through one
    BlockPtr.dtype = property(lambda self: self.base.dtype)
    BlockPtr.type = property(lambda self: BlockPtrType(BlockPtr, [(n, getattr(self, n).type) for n in fields]))

    unwrap = core._unwrap_if_constexpr

    def scalar(x, dtype, sem):
        x = x if isinstance(x, tl.tensor) else sem.to_tensor(unwrap(x))
        return sem.cast(x, dtype)

    def ints(values) -> tuple:
        return tuple(int(unwrap(v)) for v in unwrap(values))

    @core.builtin
    def make_block_ptr(base, shape, strides, offsets, block_shape, order, _semantic=None):
        sem = _semantic
        if not (isinstance(base, tl.tensor) and base.type.is_ptr()):
            raise ValueError("make_block_ptr's base must be a pointer")
        return BlockPtr(base, tl.tuple([scalar(s, tl.int64, sem) for s in shape]),
                        tl.tuple([scalar(s, tl.int64, sem) for s in strides]),
                        tl.tuple([scalar(o, tl.int32, sem) for o in offsets]),
                        tl.constexpr(ints(block_shape)), tl.constexpr(ints(order)))

    @core.builtin
    def advance(base, offsets, _semantic=None):
        sem = _semantic
        moved = [sem.cast(sem.add(o, scalar(d, tl.int32, sem), True), tl.int32)
                 for o, d in zip(base.offsets, unwrap(offsets))]
        return BlockPtr(base.base, base.shape, base.strides, tl.tuple(moved), base.block_shape, base.order)

    def pointers(bp, boundary_check, sem):
        """(tensor of pointers, mask or None): RewriteTensorPointer's lowering of one access."""
        block = bp.block_shape.value
        checked = set(ints(boundary_check or ()))
        ptr, mask = bp.base, None
        for d, size in enumerate(block):
            index = sem.add(sem.cast(sem.arange(0, size), tl.int64), sem.cast(bp.offsets[d], tl.int64), True)
            for k in range(len(block)):
                if k != d:
                    index = sem.expand_dims(index, 0 if k < d else len(index.shape))
            ptr = sem.add(ptr, sem.mul(index, bp.strides[d], True), True)
            if d in checked:
                inside = sem.and_(sem.greater_equal(index, sem.to_tensor(0)), sem.less_than(index, bp.shape[d]))
                mask = inside if mask is None else sem.and_(mask, inside)
        return ptr, mask

    original_load, original_store = tl.load, tl.store

    @core.builtin
    def load(pointer, mask=None, other=None, boundary_check=(), padding_option="", cache_modifier="",
             eviction_policy="", volatile=False, _semantic=None):
        if not isinstance(pointer, BlockPtr):
            return original_load(pointer, mask, other, cache_modifier=cache_modifier,
                                 eviction_policy=eviction_policy, volatile=volatile, _semantic=_semantic)
        ptr, inside = pointers(pointer, boundary_check, _semantic)
        pad = unwrap(padding_option)
        fill = None if inside is None or not pad else (float("nan") if pad == "nan" else 0)
        return original_load(ptr, inside, fill, cache_modifier=cache_modifier, eviction_policy=eviction_policy,
                             volatile=volatile, _semantic=_semantic)

    @core.builtin
    def store(pointer, value, mask=None, boundary_check=(), cache_modifier="", eviction_policy="", _semantic=None):
        if not isinstance(pointer, BlockPtr):
            return original_store(pointer, value, mask, cache_modifier=cache_modifier,
                                  eviction_policy=eviction_policy, _semantic=_semantic)
        ptr, inside = pointers(pointer, boundary_check, _semantic)
        return original_store(ptr, value, inside, cache_modifier=cache_modifier, eviction_policy=eviction_policy,
                              _semantic=_semantic)

    return {"make_block_ptr": make_block_ptr, "advance": advance, "load": load, "store": store}


@contextlib.contextmanager
def emulated():
    """Block pointers in triton.language for the duration, where this Triton removed them; else nothing."""
    import triton.language as tl
    from triton.language import core

    if not _missing() or not hasattr(core, "_aggregate"):
        yield
        return
    if "stand_ins" not in _state:
        try:
            _state["stand_ins"] = _build(tl, core)
        except Exception:  # noqa: BLE001 - a Triton whose internals moved keeps its own refusal
            _state["stand_ins"] = None
    stand_ins = _state["stand_ins"]
    if not stand_ins:
        yield
        return
    originals = {name: getattr(tl, name, None) for name in stand_ins}  # 3.9 exports no tl.advance at all
    for name, fn in stand_ins.items():
        setattr(tl, name, fn)
    try:
        yield
    finally:
        for name, fn in originals.items():
            if fn is None:
                delattr(tl, name)
            else:
                setattr(tl, name, fn)


def note_for(fn) -> str | None:
    """The note a kernel's facts carry when it, or a JIT function it names, uses block pointers here."""
    import triton

    if not _missing():
        return None
    sources = [getattr(fn, "src", "") or ""]
    for name, value in (getattr(getattr(fn, "fn", None), "__globals__", None) or {}).items():
        if name in sources[0] and hasattr(value, "src") and value is not fn:
            sources.append(value.src or "")
    if any("make_block_ptr" in s for s in sources):
        return NOTE.format(version=triton.__version__)
    return None
