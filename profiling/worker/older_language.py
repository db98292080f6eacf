"""What Triton 3.9 removed or now refuses, compiled as the Tritons before it did.

Standalone (stdlib + triton): shipped as a plain file beside job_compile.py, which compiles under
`emulated()` and notes what a configuration needed (`compiled_noting`, `note`).

Kernels written for an earlier Triton got no compile facts here for two reasons that are the
installed Triton's, not the kernel's:

- **Block pointers.** 3.9 keeps `tl.make_block_ptr` and `tl.advance` only as stubs that raise. On
  NVIDIA targets the Tritons that had them never kept a block pointer to the end either: their
  RewriteTensorPointer pass, run before any GPU-specific one, turned each into a tensor of pointers
  (`base + sum((offset_d + arange(block_d)) * stride_d)`, in 64-bit) and each `boundary_check` into
  a mask (`0 <= index_d < shape_d`), with `padding_option` as the load's `other`. The stand-ins
  build that in the front end, at each access as the pass did.
- **A full slice past a tensor's rank** (`pid[:, None]` on a scalar): 3.9 raises "too many indices";
  earlier Tritons passed over the extra `:`, so the stand-in drops it before indexing (for a
  scalar, expanding at any axis gives the same one-element block).

Registers, spills and shared memory then come from the IR the older Triton fed its backend, up to the
order of its operations; the kernel's facts say which of these it needed.
"""

from __future__ import annotations

import contextlib

_REMOVED = "have been removed"  # the stub's docstring in Triton 3.9: "Block pointers have been removed. ..."
_RANK_CHECK = "too many indices for tensor of rank"  # 3.9's tensor.__getitem__
NOTES = {
    "block pointers": "block pointers lowered to pointer tensors and masks",
    "full slice": "a full slice past a tensor's rank (`x[:, None]` on a scalar) passed over",
}

_state: dict = {"traced": False}  # traced: Triton's front end ran since _used_by() last asked
_used: set = set()  # what the stand-ins were needed for since then
_RECORD = "tritonlens_older_language.json"  # beside Triton's own cache entry: a cache hit traces nothing


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
        _used.add("block pointers")
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


def _build_getitem(tl, core):
    """tensor.__getitem__ that passes over full slices past the rank, as Triton 3.8 did."""
    import inspect

    original = tl.tensor.__getitem__
    if _RANK_CHECK not in inspect.getsource(original):
        return None

    def full(sl) -> bool:
        return isinstance(sl, (slice, core.slice)) and all(
            core._unwrap_if_constexpr(a) is None for a in (sl.start, sl.stop, sl.step))

    @core.builtin
    def getitem(self, slices, _semantic=None):
        seq = slices
        if isinstance(seq, (slice, core.slice, core.constexpr)) or seq is None:
            seq = [seq]
        elif isinstance(seq, core.tuple):
            seq = list(seq.values)
        kept, seen = [], 0
        for sl in seq:
            if full(sl):
                seen += 1
                if seen > len(self.shape):
                    continue
            kept.append(sl)
        if len(kept) == len(seq):
            return original(self, slices, _semantic=_semantic)
        _used.add("full slice")
        return original(self, kept, _semantic=_semantic)

    return getitem


@contextlib.contextmanager
def emulated():
    """The stand-ins in triton.language for the duration, for what this Triton removed or refuses."""
    import triton.language as tl
    from triton.language import core

    if "stand_ins" not in _state:
        _state["stand_ins"], _state["getitem"] = {}, None
        try:
            if _missing() and hasattr(core, "_aggregate"):
                _state["stand_ins"] = _build(tl, core)
            _state["getitem"] = _build_getitem(tl, core)
        except Exception:  # noqa: BLE001, S110 - a Triton whose internals moved keeps its own refusals
            pass
    stand_ins, getitem = _state["stand_ins"], _state["getitem"]
    originals = {name: getattr(tl, name, None) for name in stand_ins}  # 3.9 exports no tl.advance at all
    original_getitem = tl.tensor.__getitem__
    from triton.compiler import ASTSource

    make_ir = ASTSource.make_ir

    def traced_make_ir(self, *args, **kwargs):
        _state["traced"] = True
        return make_ir(self, *args, **kwargs)

    ASTSource.make_ir = traced_make_ir
    for name, fn in stand_ins.items():
        setattr(tl, name, fn)
    if getitem is not None:
        tl.tensor.__getitem__ = getitem
    try:
        yield
    finally:
        ASTSource.make_ir = make_ir
        tl.tensor.__getitem__ = original_getitem
        for name, fn in originals.items():
            if fn is None:
                delattr(tl, name)
            else:
                setattr(tl, name, fn)


def _forget() -> None:
    """Start a compile: what was traced before it is not its."""
    _state["traced"] = False
    _used.clear()


def _used_by(kernel) -> list[str] | None:
    """What the stand-ins were needed for to compile `kernel` (a CompiledKernel) since _forget(): read
    from the trace and kept beside Triton's cache entry, or read back from there when Triton's cache
    answered without tracing; None when that entry has no record (it predates them: compile again)."""
    import json

    from triton.runtime.cache import get_cache_manager

    used = sorted(_used)
    traced = _state["traced"]
    _forget()
    try:
        manager = get_cache_manager(kernel.hash)
        if traced:
            manager.put(json.dumps(used), _RECORD, binary=False)
            return used
        path = manager.get_file(_RECORD)
        if not path:
            return None
        with open(path, encoding="utf-8") as fh:
            return list(json.load(fh))
    except (OSError, ValueError, AttributeError):
        return used  # no record to keep or read: the facts go without the note, not without the facts


def compiled_noting(build):
    """(`build()`'s CompiledKernel, what the stand-ins were needed for). Triton's cache may answer
    without tracing, from an entry made before it kept that: then the kernel is traced once more."""
    _forget()
    kernel = build()
    used = _used_by(kernel)
    if used is None:
        with _tracing():
            kernel = build()
        used = _used_by(kernel)
    return kernel, used or []


@contextlib.contextmanager
def _tracing():
    """Triton's front end runs for the duration, whatever its cache holds."""
    from triton import knobs

    before = knobs.compilation.always_compile
    knobs.compilation.always_compile = True
    try:
        yield
    finally:
        knobs.compilation.always_compile = before


def note(used) -> str | None:
    """The note a kernel's facts carry when its compile needed the stand-ins for `used`."""
    import triton

    said = [NOTES[u] for u in sorted(set(used)) if u in NOTES]
    if not said:
        return None
    return f"{'; '.join(said)}, as Triton 3.8 and earlier compiled them (Triton {triton.__version__} refuses them)"
