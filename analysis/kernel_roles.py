"""Which of an analysed file's `@triton.jit` functions are device helpers, not kernels one launches.

A device helper is called from kernels, never launched on its own: compiling it with assumed
arguments, profiling it or offering to optimize it makes no sense (its parameters are whatever its
callers pass, often blocks, not the int32 scalars a launch would give it). Every consumer (the
compile job's configurations, the code lenses, the hover, the rules) asks here, so they all agree.

The judgement is `kernel_discovery.kind_of`, made on the tree-sitter model by `model.jit_functions`:
a function launched in the file (`k[grid](...)`) is a kernel even when it returns a value; one that
is not launched is a helper when it returns a value, is the combine function of a `tl.reduce` /
`tl.associative_scan`, or is called from another JIT function; anything else is a kernel (code
elsewhere may launch it).

A name defined twice (`if HAS_X: @triton.jit def f…  else: @triton.jit def f…`) has a role per
definition (`is_device_helper` asks for one kernel); by name, the last definition in the file is
the one that counts, as it is everywhere a phase resolves a kernel by its name.
"""

from __future__ import annotations

from .kernel_types import Kernel, Module
from .model import JitDefinition, jit_functions

_MEMO = "kernel_roles"


def roles(module: Module) -> dict[tuple[str, int], JitDefinition]:
    """(name, 1-based line of the `def`) → the definition and its role, for every JIT function of
    `module`'s text; judged once per analysed text (kept in `module.memo`)."""
    found = module.memo.get(_MEMO)
    if found is None:
        found = module.memo[_MEMO] = {(j.name, j.line): j for j in jit_functions(module.src, module.aliases)}
    return found


def device_helpers(module: Module) -> set[str]:
    """Names of the file's JIT functions that are device helpers (by the last definition of each name)."""
    last: dict[str, JitDefinition] = {}
    for j in roles(module).values():  # in source order
        last[j.name] = j
    return {name for name, j in last.items() if not j.launchable}


def role_of(module: Module, kernel: Kernel) -> JitDefinition | None:
    """The role of this definition of `kernel` (None when `module`'s text does not define it)."""
    found = roles(module)
    j = found.get((kernel.name, kernel.node.start_point[0] + 1))
    if j is None:  # a model built on other text than the module's: judged by name
        j = next((d for d in reversed(found.values()) if d.name == kernel.name), None)
    return j


def is_device_helper(module: Module, kernel: Kernel) -> bool:
    """Whether this definition of `kernel` is a device helper rather than a launchable kernel."""
    j = role_of(module, kernel)
    return j is not None and not j.launchable
