"""Block shapes, element dtypes and constexpr values of every expression in a kernel: the one
shape engine, an abstract interpreter.

Triton kernels have a static type system that Python tools cannot see: every value is a scalar or
a block of a fixed shape (dimensions are constexpr expressions) with one element dtype. The engine
runs each kernel body once per resolved configuration and once fully symbolically, and records the
value of each assignment target and of each expression it evaluated, the branches a configuration
does not take, and the shape conflicts the compiler would refuse (broadcasts, masks, stored values,
`tl.dot` operands). Every rule that needs the value of a constexpr expression in a configuration
(KernelShapes.constant_at), TL016–TL018, the estimates, hover and inlay hints all read it.

Modules: abstract (values, broadcasting, joins), dtypes (names, promotion, sizes), interpreter
(statements), expressions (Python syntax), jit_calls (@jit helpers), tl_calls and tl_layout
(`tl.*` semantics), kernel (the per-kernel entry point). Constant arithmetic is values.py's.

Pure: no pygls, torch or triton import. Unknown stays unknown: a dimension or dtype that cannot be
known is None and is never reported as a conflict, and a value the engine does not model is
UNKNOWN_ABS, neither a constexpr nor a runtime tensor. A device helper's parameters are unknown.
"""

from .abstract import (
    NONE_ABS,
    NOT_RUN,
    UNKNOWN_ABS,
    Abs,
    ShapeConflict,
    Sym,
    broadcast,
    const,
    describe,
    join,
    shape_text,
)
from .dtypes import DTYPE_NAMES, element_bytes, normalize_dtype, promote
from .interpreter import Interpreter, Problem, RunResult
from .kernel import (
    KernelShapes,
    assignment_targets,
    infer_kernel,
    jit_functions,
)

__all__ = [
    "DTYPE_NAMES", "NONE_ABS", "NOT_RUN", "UNKNOWN_ABS", "Abs", "Interpreter", "KernelShapes", "Problem", "RunResult",
    "ShapeConflict", "Sym", "assignment_targets", "broadcast", "const", "describe", "element_bytes",
    "infer_kernel", "jit_functions", "join", "normalize_dtype", "promote", "shape_text",
]
