"""Every value of a static configuration, with where it came from: read from the text ("static"),
set by the user ("pinned", config_pins.py) or assumed by the method below ("assumed").

A value the static model resolved is kept. A value it could not resolve is pinned when a pin names
it; else, in this order:

1. **The launch, on representative sizes.** A constexpr (or num_warps) the launch passes is folded
   from the wrapper's code with tensor sizes replaced by representative ones and project helpers
   such as `calculate_settings(n)` evaluated from their text (representative_eval.py explains the
   sizes and the subset of Python it folds; no user code runs). Read without any representative
   size it is static (`calculate_settings(1024)`); otherwise assumed. A tile folded above 2**16
   elements (representative sizes multiplied together), above 4096 on a side of a 2-D tile or
   above 256 in a kernel with a `tl.dot`, or a `tl.static_range` bound above 64, is dropped for
   the rules below.
2. **Heuristics.** A `@triton.heuristics` lambda is folded on the configuration's other values
   (runtime integers at representative sizes). A lambda of plain constants is static. A boolean
   one (`args["bias"] is not None`, `args["n"] % args["BLOCK"] == 0`) whose answer depends on
   something assumed is compiled both ways: one configuration with every such flag True, one
   with every flag False (two compiles, not two to the power of the flags).
3. **How the kernel uses the name** (param_use.py reads what its use allows first: a name in an
   address or a shift is an integer, one tested as a condition a flag, one passed as
   `eviction_policy` / `cache_modifier` / `input_precision` that API's default string):
   - a float by its name (`eps` 1e-6; `scale`, `alpha`, `temperature`, a dtype's `_min`/`_max`
     bound: 1.0) or its `float` annotation;
   - a dtype (`.to(X)`, `dtype=X`, `tl.cast(v, X)`, or a name ending in dtype/type): float32 for
     an accumulator or compute type (`ACC_DTYPE`), else the half type the kernel names (as the
     pointer stand-ins do), else float32;
   - a flag (`if X:`, `not X`, `X and …`, a `HAS_` / `USE_` / `IS_` name, a bool annotation):
     False, the path without the optional feature;
   - compared with literals (`X == "gelu"`, `X == MODE_A`): the first literal it is compared with;
   - a tile (a `tl.arange` bound, a `tl.zeros` / `tl.full` / block-pointer shape): a power of
     two, 16 each when a kernel without `tl.dot` has three or more, 64 when the kernel has a
     `tl.dot` or two tile sizes (MMA tiles as Triton's matmul
     tutorial starts from; a 2-D tile of 4,096 elements keeps registers and shared memory
     plausible), else 1024 (a 1-D block of a row);
   - a `tl.static_range` bound: 4 (it unrolls);
   - num_warps 4 and num_stages 3: Triton's defaults;
   - any other integer: the representative size for its name.

Each assumed value also carries the next representative values to try when it does not compile
(`Filled.alternatives`: a tile's neighbours, a smaller size, the use's value for a folded or
compared one), which the compile worker retries (worker/compile_retry.py).

Every assumed value carries how to pin it, e.g. "assumed BLOCK_SIZE=4096 (… ; pin it:
`# tritonlens: BLOCK_SIZE=4096` above the kernel)".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tritonlens.analysis.source import Source
from tritonlens.analysis.values import UNKNOWN
from tritonlens.profiling.config_pins import DType, KernelPins, show
from tritonlens.profiling.descriptor_params import descriptor_params
from tritonlens.profiling.host_expressions import HEAD_DIM, SIZE
from tritonlens.profiling.kernel_pointers import without_docstrings
from tritonlens.profiling.param_use import NO_USE, ParamUse, string_default, tile_names
from tritonlens.profiling.representative_eval import HostEval, Size, representative_size

SOURCES = ("captured", "configs", "static", "pinned", "assumed")  # strongest first
DOT_TILE, ROW_TILE, UNROLL = 64, 1024, 4
# A block of 3 or more tiles of 64 passes Triton's 2**20 elements per tensor; 16 each stays under.
SMALL_TILE = 16
# A tile folded from representative sizes above this is theirs, not the kernel's: 2**16 elements.
MAX_FOLDED_TILE = 1 << 16
MAX_2D_TILE, MAX_DOT_TILE = 4096, 256
MAX_FOLDED_UNROLL = 64
MAX_MESSAGE = 160  # a message shown to users
# A tile that does not compile (a reshape that needs another size, a block over Triton's element
# limit) is retried with these, in order: the neighbours a kernel's tiles usually take.
# An MMA tile goes down first (shared memory), a 2-D elementwise one up first (a row of 128).
_TILE_ALTERNATIVES = {SMALL_TILE: (32, 64), DOT_TILE: (32, 16), ROW_TILE: (256, 64)}
_2D_TILE_ALTERNATIVES = (128, 32)
_TWO_D = re.compile(r"\[\s*:\s*,\s*None\s*\]|\[\s*None\s*,\s*:\s*\]")
# A size given to a constexpr that does not compile at model scale (a shift count, a bound Triton
# unrolls) is retried smaller; a head dim's 128 (a matmul's K by its name) first at model scale, which
# a divisibility the kernel asserts (`K % (4 * BLOCK_K) == 0`) needs.
_SIZE_ALTERNATIVES = (128, 16)
_FLAG_NAME = re.compile(r"^(HAS|USE|IS|ENABLE|EVEN|NEED|DO|APPLY|WITH|SKIP|NO|SAVE|STORE|RETURN|COMPUTE)_|"
                        r"_(FLAG|ENABLED)$", re.IGNORECASE)
_DTYPE_NAME = re.compile(r"dtype$|_type$|^type_|^(DTYPE|TYPE)$", re.IGNORECASE)
# Names a float goes by: a scalar argument or constexpr called so is a float, not a size.
FLOAT_NAMES = re.compile(r"(^|_)(eps|epsilon|scale|alpha|beta|gamma|momentum|temperature|temp|rate|factor|"
                         r"sm_scale|qk_scale|softcap|dropout|p_drop)($|_)", re.IGNORECASE)
# ... unless the name says it counts or addresses something (`Scale_row_stride`, `scale_ptr`).
_COUNTS = re.compile(r"stride|ptr|size|len|idx|index|num|count|offset|off_", re.IGNORECASE)
_EPS = re.compile(r"(^|_)eps(ilon)?($|_)", re.IGNORECASE)
_DTYPE_BOUND = re.compile(r"dtype_?(min|max)$|(min|max)_?dtype|(^|_)(fp8|fp4|int8)_?(min|max)$", re.IGNORECASE)
_ACC_NAME = re.compile(r"acc|compute|accum", re.IGNORECASE)
_BOOLEAN_EXPR = ("comparison_operator", "boolean_operator", "not_operator")
_DEFAULTS = ("Triton's default", "the default of")  # origins (analysis/launches.py) a pin overrides


def is_float_name(name: str) -> bool:
    """Whether a value called `name` is a float (eps, scale, alpha, temperature...), not a count."""
    return bool(FLOAT_NAMES.search(name)) and not _COUNTS.search(name)


def weakest(sources) -> str:
    """The weakest source among `sources` (the configuration's overall source)."""
    ranked = [s for s in sources if s in SOURCES]
    return max(ranked, key=SOURCES.index) if ranked else "static"


@dataclass(frozen=True)
class Filled:
    """One value of a configuration: the value, its source, and for an assumed one why it was chosen."""

    value: object
    source: str
    why: str = ""
    # The next representative values, tried in order when this one does not compile
    # (worker/compile_retry.py); only an assumed value has them.
    alternatives: tuple = ()

    def note(self, name: str) -> str:
        """The line that says how to pin an assumed value."""
        v = show(self.value)
        pin = f"; pin it: `# tritonlens: {name}={v}` above the kernel)"
        head = f"assumed {name}={v} ("
        room = MAX_MESSAGE - len(head) - len(pin)
        why = self.why if len(self.why) <= room else self.why[:max(room - 1, 0)] + "…"
        return head + why + pin


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _ok(v) -> bool:
    return v is not UNKNOWN and not isinstance(v, Size) and isinstance(v, (bool, int, float, str, DType))


class Assumer:
    """Fills the unknown values of one kernel's resolved configurations."""

    def __init__(self, module, kernel, pins: KernelPins, host: HostEval, half: str | None,
                 use: ParamUse = NO_USE):
        self.module, self.k, self.pins, self.host, self.use = module, kernel, pins, host, use
        self.src = kernel.src or module.src
        self.text = without_docstrings(kernel.text or self.src.text_of(kernel.outer))
        self.half = half
        self.tiles = self._tiles()
        # A kernel's only tile that also builds 2-D tensors (x[:, None], y[None, :]) is on both sides of them: a
        # row tile's 1024 would make a million-element square, minutes to compile and no one's launch.
        self.square = len(self.tiles) == 1 and bool(_TWO_D.search(self.text))
        self._unused_reported: set[str] = set()
        # How the kernel uses its names, read once: each a set of identifiers.
        words = r"([A-Za-z_]\w*)"
        self.as_dtype = _found(self.text, rf"dtype\s*=\s*{words}", rf"\.to\(\s*{words}", rf"cast\([^()\n]*,\s*{words}")
        self.as_flag = _found(self.text, rf"\bif\s+(?:not\s+)?{words}\s*:", rf"\bnot\s+{words}",
                              rf"\b(?:and|or)\s+{words}", rf"{words}\s+(?:and|or)\b") | use.condition
        # static_range(N), static_range(0, N - 1, 2): any name in its bounds unrolls the loop
        self.unrolled = {n for m in re.finditer(r"static_range\(([^()\n]*)\)", self.text)
                         for n in re.findall(r"[A-Za-z_]\w*", m.group(1))} | use.unrolled  # also in a jit helper's
        # a float by how the kernel uses it: divided into (`label_smoothing / n_cols`), taken from 1
        # (`1 - label_smoothing`) or compared with a float literal; a size is rarely any of these
        # strings and comments blanked: an assert's message or a comment ("K / 4 must be...") is no use of K
        code = re.sub(r"#[^\n]*", "", re.sub(r"\"[^\"\n]*\"|'[^'\n]*'", '""', self.text))
        self.as_float = _found(code, rf"{words}\s*/(?![/=])", rf"\b1(?:\.0*)?\s*-\s*{words}",
                               rf"{words}\s*[<>]=?\s*\d*\.\d")
        self.compared: dict[str, str] = {}  # name → the first literal or name it is compared with
        # each side alone: `K % BLOCK_K == 0` compares `K % BLOCK_K`, not BLOCK_K, with 0
        for m in re.finditer(r"(?<![%*/+\-&|^<>]\s)(?<![\w.%*/+\-&|^<>])([\w.]+|\"[^\"\n]*\"|'[^'\n]*')\s*==\s*"
                             r"([\w.]+|\"[^\"\n]*\"|'[^'\n]*')(?![\w.])(?!\s*[%*/+\-&|^<>(\[])", self.text):
            self.compared.setdefault(m.group(1), m.group(2))
            self.compared.setdefault(m.group(2), m.group(1))

    # -- one configuration ------------------------------------------------------------------------

    def fill(self, cfg) -> tuple[dict[str, Filled], list[str]]:
        """Every value of `cfg` filled, and the heuristic flags that should be compiled both ways."""
        k = self.k
        pins = self.pins.for_launch(cfg.launch.line if cfg.launch is not None else None)
        out: dict[str, Filled] = {}
        for name, v in cfg.values.items():
            if name in ("num_warps", "num_stages") and not _count(v.value):
                continue  # not a count (an env lookup read as False): assumed below, as if unread
            if v.value is not UNKNOWN:
                pin = pins.get(name)
                if pin is not None and v.origin.startswith(_DEFAULTS):
                    continue  # nobody wrote this value down: the pin says what the caller passes
                out[name] = Filled(v.value, "static")
                self._unused(pin, name, v.value, v.origin or cfg.label)
        # Static first (the launch folded from the text alone), then a pin, then an assumption.
        for name in [n for n in cfg.values if n not in out and n not in k.heuristics]:
            got = self._from_launch(cfg, name)
            if got is not None and got.source == "static":
                self._unused(pins.get(name), name, got.value, f"the launch at line {cfg.launch.line}")
            elif name in pins:
                got = Filled(pins[name].value, "pinned")
            if got is not None:
                out[name] = got
        branches = []
        for name in k.heuristics:
            if name in cfg.values and name not in out:
                got = self._heuristic(name, out, cfg)
                if name in pins and not (isinstance(got, Filled) and got.source == "static"):
                    out[name] = Filled(pins[name].value, "pinned")
                elif got == "branch":
                    branches.append(name)
                    out[name] = Filled(True, "assumed", "a heuristic's branch")
                elif got is not None:
                    out[name] = got
        for name in [n for n in cfg.values if n not in out]:
            out[name] = self._by_use(name)
        return out, branches

    def _unused(self, pin, name: str, value, origin: str) -> None:
        """Say once that a pin lost to a value the text gives."""
        if pin is not None and pin.value != value and name not in self._unused_reported:
            self._unused_reported.add(name)
            self.pins.messages.append(f"pin {pin.text()} not used: {origin} gives {name}={show(value)}"[:160])

    def _arg_node(self, launch, name):
        if launch is None:
            return None
        if name in launch.kwargs:
            return launch.kwargs[name]
        p = self.k.param(name)
        if p is not None and p.index < len(launch.args) and all(
                a.type not in ("list_splat", "dictionary_splat") for a in launch.args[:p.index + 1]):
            return launch.args[p.index]
        return None

    def _from_launch(self, cfg, name) -> Filled | None:
        node = self._arg_node(cfg.launch, name)
        if node is not None:
            value, used = self.host.launch_arg(cfg.launch, node)
        else:
            splat = next((a for a in (cfg.launch.args if cfg.launch is not None else ())
                          if a.type == "dictionary_splat"), None)
            if splat is None:
                return None
            value, used = self.host.launch_kwarg(cfg.launch, splat, name)  # `**kernel_args`
        if not _ok(value) or (name in ("num_warps", "num_stages") and not _count(value)):
            return None
        if not used:
            return Filled(value, "static")
        if name in self.tiles and isinstance(value, int) and value > self._folded_tile_limit():
            return None  # sizes that fit no kernel (two 4096s multiplied): the tile's own default
        if name in self.unrolled and isinstance(value, int) and value > MAX_FOLDED_UNROLL:
            return None  # a representative size as a tl.static_range bound unrolls thousands of times
        sizes = ", ".join(f"{n}={v}" for n, v in list(used.items())[:3])
        own = self._by_use(name)  # if the folded value does not compile: what the name's use gives
        more = (own.value, *own.alternatives) if isinstance(value, int) and own.value != value else ()
        return Filled(value, "assumed", f"the launch at line {cfg.launch.line} with {sizes}",
                      tuple(v for v in more if isinstance(v, int) and not isinstance(v, bool) and v != value))

    def _folded_tile_limit(self) -> int:
        """The largest tile a representative size may fold into: 256 along an MMA tile (4096 would
        be a 4096-wide dot: minutes in ptxas, a block no one launches), 4096 per side of a 2-D
        tile, 2**16 for a kernel's only tile."""
        if any(c.name == "dot" for c in self.k.calls):
            return MAX_DOT_TILE
        return MAX_2D_TILE if len(self.tiles) > 1 or self.square else MAX_FOLDED_TILE

    def _heuristic(self, name, known: dict[str, Filled], cfg):
        text = self.k.heuristics[name]
        lam = Source(text)
        node = lam.root.named_children[0].named_children[0] if lam.root.named_children and \
            lam.root.named_children[0].named_children else None
        if node is None or node.type != "lambda":
            return None
        body = node.child_by_field_name("body")
        params = node.child_by_field_name("parameters")
        arg = lam.text_of(params.named_children[0]) if params is not None and params.named_children else "args"
        view: dict = {}
        assumed_input = False
        for p in self.k.params:
            if p.name in known:
                view[p.name] = known[p.name].value
                assumed_input |= known[p.name].source == "assumed"
            elif p.name in cfg.scalars and cfg.scalars[p.name].value is not UNKNOWN:
                view[p.name] = cfg.scalars[p.name].value
            elif not p.is_constexpr:
                view[p.name] = Size(p.name)  # a pointer stays opaque: `is not None` cannot be decided
        value, used = self.host.expression(body, {arg: view}, lam)
        boolean = body.type in _BOOLEAN_EXPR or (body.type == "call" and lam.text_of(body).startswith("bool("))
        if boolean and (not _ok(value) or used or assumed_input):
            return "branch"
        if not _ok(value):
            return None
        if used or assumed_input:
            return Filled(value, "assumed", "its @triton.heuristics on representative sizes")
        return Filled(value, "static")

    # -- what the kernel does with the name -------------------------------------------------------

    def _tiles(self) -> set[str]:
        names = {p.name for p in self.k.params if p.is_constexpr}
        out = names & (tile_names(self.k, self.src) | self.use.tiles)  # the use: also in a jit helper's
        # block shapes of make_block_ptr / make_tensor_descriptor, also under an alias the model does not resolve
        shapes = " ".join(re.findall(r"block_shape\s*=\s*[\[(]([^\])]*)", self.text))
        out |= names & set(re.findall(r"[A-Za-z_]\w*", shapes))
        return out | {s for sides in descriptor_params(self.k).values() for s in sides if s in names}

    def _by_use(self, name: str, compared: bool = True) -> Filled:
        k = self.k
        p = k.param(name)
        if name == "num_warps":
            return Filled(4, "assumed", "Triton's default")
        if name == "num_stages":
            return Filled(3, "assumed", "Triton's default")
        ann = (p.annotation or "") if p is not None else ""
        if re.search(rf"\b{re.escape(name)}\s+is\s+(?:not\s+)?None\b", self.text):
            return Filled(None, "assumed", "optional (`is None`): the path without it")
        string = string_default(self.use, name)
        if string is not None:
            return Filled(string[0], "assumed", f"a string: the kernel passes it as {string[1]}, this its default")
        if name in self.use.condition and "float" not in ann:
            return Filled(False, "assumed", "a flag: the path without it")
        float_name = (is_float_name(name) or _DTYPE_BOUND.search(name)) and name not in self.use.integer
        if float_name or "float" in ann:
            value = 1e-6 if _EPS.search(name) else 1.0
            return Filled(value, "assumed", "a float, by its name" if "float" not in ann else "annotated float")
        # LOSS_TYPE == 0: a mode named "type", not a dtype
        if (_DTYPE_NAME.search(name) and self._compared_literal(name) is None) or name in self.as_dtype:
            if _ACC_NAME.search(name):
                return Filled(DType("float32"), "assumed", "an accumulator type")
            if self._bitwise_target(name):
                return Filled(DType("int32"), "assumed", "an integer type: values cast to it are bit-shifted or masked")
            if self.half:
                return Filled(DType(self.half), "assumed", f"the kernel names tl.{self.half}")
            return Filled(DType("float32"), "assumed", "a dtype, fp32 by default")
        literal = self._compared_literal(name) if compared else None
        if literal is not None:
            # a tile compared with a literal (`BLOCK == 1`) may need its own size instead; a mode
            # compared with 0, 1, 2 is no size
            own = self._by_use(name, compared=False) if name in self.tiles else None
            more = (own.value, *own.alternatives) if own is not None and own.value != literal else ()
            return Filled(literal, "assumed", "the first value the kernel compares it with",
                          tuple(v for v in more if _count(v) and v != literal))
        if "bool" in ann or _FLAG_NAME.search(name) or name in self.as_flag:
            return Filled(False, "assumed", "a flag: the path without it")
        if name in self.unrolled:
            return Filled(UNROLL, "assumed", "a tl.static_range bound, kept small", (2, 8))
        if name in self.tiles:
            dot = any(c.name == "dot" for c in k.calls)
            size = (DOT_TILE if dot or len(self.tiles) == 2 or self.square else SMALL_TILE if len(self.tiles) > 2
                    else ROW_TILE)
            why = ("a tile with tl.dot" if dot else "both sides of its 2-D tiles" if self.square
                   else "one of the kernel's 2-D tile sizes" if size == DOT_TILE
                   else "one of its 3 or more tile sizes, kept small" if size == SMALL_TILE else "a 1-D tile")
            more = _2D_TILE_ALTERNATIVES if size == DOT_TILE and not dot else _TILE_ALTERNATIVES[size]
            return Filled(size, "assumed", why, more)
        if name in self.as_float:
            return Filled(0.1, "assumed", "a float, by how the kernel uses it")
        size = representative_size(name)
        more = (SIZE, 16) if size == HEAD_DIM else tuple(v for v in _SIZE_ALTERNATIVES if isinstance(size, int) and v < size)
        return Filled(size, "assumed", f"a representative size for {name}", more)

    def _bitwise_target(self, name: str) -> bool:
        """Is `name` a dtype that values are cast to and then shifted, or-ed or masked
        (`values = tl.load(p).to(out_dtype)`, then `values << shifts`)? A float type would not compile."""
        n = re.escape(name)
        cast = set(re.findall(rf"([A-Za-z_]\w*)\s*=[^\n]*\.to\(\s*{n}\s*\)", self.text))
        return any(re.search(rf"\b{re.escape(v)}\b\s*(?:<<|>>|[|&^](?!=))|(?:<<|>>|[|&^])\s*\b{re.escape(v)}\b", self.text)
                   for v in cast)

    def _compared_literal(self, name: str):
        written = self.compared.get(name)
        if written is None:
            return None
        other = Source(written)
        node = other.root.named_children[0].named_children[0] if other.root.named_children and \
            other.root.named_children[0].named_children else None
        value, _ = self.host.expression(node, {}, other) if node is not None else (UNKNOWN, {})
        constant = self.host.main.constants.get(written)
        if value is UNKNOWN and constant is not None:
            # a module constant of the kernel's file (`MODE_A: tl.constexpr = tl.constexpr(0)`)
            value, _ = self.host.expression(constant, {}, self.host.main.src)
        return value if _ok(value) and not isinstance(value, DType) else None


def _found(text: str, *patterns: str) -> set[str]:
    """The identifiers the patterns' first group matches anywhere in `text`."""
    return {m.group(1) for p in patterns for m in re.finditer(p, text)}


def notes_after_retry(notes: list[str], spec: dict, compiled: dict) -> list[str]:
    """`notes` of a configuration whose assumed values the worker retried (worker/compile_retry.py):
    each name whose compiled value (`compiled`: constexprs, num_warps, num_stages) is not the
    assumed one says which value compiled and that the assumed one did not."""
    out = list(notes)
    for name in spec.get("retry") or {}:
        arg = (spec.get("args") or {}).get(name)
        old = arg.get("value") if isinstance(arg, dict) else (spec.get("options") or {}).get(name)
        new = compiled.get(name)
        if new is None or new == old:
            continue
        note = Filled(new, "assumed", f"retried: {name}={show(old)} did not compile").note(name)
        out = [note if n.startswith(f"assumed {name}=") else n for n in out]
    return out
