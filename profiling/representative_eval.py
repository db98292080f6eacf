"""Host code evaluated on representative sizes: what a launch would pass for a constexpr that the
static model cannot read, because it comes from a tensor's shape or from a helper.

The wrapper around a launch is followed statement by statement from its start to the launch:
assignments bind, `if` statements take the branch their condition picks, and the branch holding
the launch is entered. Nothing is imported or run; the text is read and a small pure subset of
Python is folded:

- a size read off a tensor (`x.shape[1]`, `M, N = x.shape`, `x.size(-1)`, `x.numel()`, `len(x)`),
  or a wrapper parameter with no default, stands for a representative size chosen by its name:
  128 for a head dimension (`K`, `V`, `D`, `head_dim`), 32 for a head count (`H`, `num_heads`),
  8 for a batch (`B`, `batch_size`), 4 for warps (`WARPS`), 3 for stages, 4 bits for a
  quantized width (`BITS`, `W_nbits`), and 4096 for anything else (rows, columns, hidden size,
  sequence length, vocabulary): the common model sizes the kernels are written for, and a power
  of two, so that `next_power_of_2(n)` gives a tile a kernel of that size really launches with;
- helpers fold as the value layer does (`triton.next_power_of_2`, `cdiv`, `min`, `max`, `int`),
  plus `math.ceil` / `floor` / `log2`, `bool`, `float` and `round`;
- a plain-arithmetic function defined in the file, or imported from a file of the project (`from
  .utils import calculate_settings`, `from pkg.ops.utils import ...`, found by path from the
  file's folder and its parents), is evaluated on its arguments: assignments, `if`/`elif`/`else`,
  `return`; a `raise`, a loop or any other statement makes its result unknown;
- a platform query takes the answer a CUDA machine gives (`is_hip()`, `torch.version.hip`,
  `is_xpu()` are false, `is_cuda()` true); any other condition that cannot be decided takes its
  first branch;
- `tl.float16` / `torch.bfloat16` are dtypes.

Every representative size the answer used is recorded, so that the caller can say the value was
assumed (and from what), or read statically when none was.
"""

from __future__ import annotations

import itertools
import os

from tritonlens.analysis.source import Source
from tritonlens.analysis.values import UNKNOWN
from tritonlens.profiling.host_expressions import (
    MAX_DEPTH,
    HostExpressions,
    Returned,
    Shape,
    Size,
    Unfoldable,
    representative_size,
)
from tritonlens.profiling.project_files import ProjectFile, ProjectFiles

__all__ = ["HostEval", "Size", "representative_size"]
MAX_STEPS = 400
# Sizes tried, in order, for the names a condition on the way to a launch read when the usual ones
# contradict it: smaller and larger powers of two, the usual 4096 first.
ALTERNATIVE_SIZES = (4096, 256, 65536, 1024, 128, 16384, 64, 32768, 512, 16)
MAX_RETRIES = 200
MAX_NAMES = 3


class Env(dict):
    """Names bound while host code runs, and for each the representative sizes its value rests on
    (read by its right-hand side or by the conditions around the assignment)."""

    def __init__(self):
        super().__init__()
        self.deps: dict[str, dict[str, int]] = {}


class HostEval(HostExpressions):
    """Folds host code of one file (and the project files its helpers come from) on representative sizes."""

    def __init__(self, src: Source, path: str | None = None):
        self.main = ProjectFile(src, os.path.abspath(path) if path else None)
        self._files = ProjectFiles()
        self.used: dict[str, int] = {}  # representative sizes the value being folded rests on
        self._control: list[dict[str, int]] = []  # what the conditions around the statement read
        self._steps = 0
        self._depth = 0
        self._envs: dict[int, tuple[Env, dict]] = {}  # per launch: the wrapper's names when it is reached
        self._contradicted: set[str] = set()  # sizes a condition on the way to the launch read the other way

    # -- the answer for a launch ------------------------------------------------------------------

    def launch_arg(self, launch, node):
        """The value `node` (an argument of `launch`) takes when the wrapper runs on representative
        sizes: (value or UNKNOWN, {name: representative size it read})."""
        key = launch.node.start_byte
        if key not in self._envs:
            self._envs[key] = self._reach(launch)
        env, self.sizes = self._envs[key]
        self.used, self._steps = {}, 0
        try:
            value = self.value(node, env, self.main)
        except (Unfoldable, Returned, RecursionError):
            value = UNKNOWN
        finally:
            self.sizes = {}
        return value, dict(self.used)

    def launch_kwarg(self, launch, splat, name: str):
        """What `**kwargs` (`splat`, a launch's dictionary_splat) gives for `name`: (value, sizes read),
        UNKNOWN when the dict or the key is not known."""
        inner = splat.named_children[0] if splat.named_children else None
        held, used = self.launch_arg(launch, inner) if inner is not None else (UNKNOWN, {})
        if not isinstance(held, dict) or name not in held:
            return UNKNOWN, used
        value = held[name]
        key = f"{self.main.src.text_of(inner)}[{name}]"
        env, _ = self._envs[launch.node.start_byte]
        return (Size(value.name) if isinstance(value, Size) else value), {**used, **env.deps.get(key, {})}

    def _reach(self, launch) -> tuple[Env, dict[str, int]]:
        """The wrapper's names when it reaches `launch`, and the representative sizes they rest on.
        A launch under `if BLOCK_SIZE > 256: … else:` is reached only with sizes that make the
        conditions on its way come out its way: where the usual sizes contradict them, other sizes
        are tried for the names those conditions read (a kernel launched only for small rows is
        not compiled with a tile of 4096)."""
        env, contradicted = self._run_wrapper(launch, {})
        names, tries = sorted(contradicted)[:MAX_NAMES], 0
        while names and tries < MAX_RETRIES:
            grown = None
            for choice in itertools.product(ALTERNATIVE_SIZES, repeat=len(names)):
                tries += 1
                sizes = dict(zip(names, choice))
                again, still = self._run_wrapper(launch, sizes)
                if not still:
                    return again, sizes
                if len(names) < MAX_NAMES and still - set(names):  # another condition read another size
                    grown = sorted(set(names) | still)[:MAX_NAMES]
                    break
                if tries >= MAX_RETRIES:
                    break
            if grown is None:
                break
            names = grown
        return env, {}  # no size we try reaches it: the usual ones, as before

    def _run_wrapper(self, launch, sizes: dict[str, int]) -> tuple[Env, set[str]]:
        env = Env()
        self.sizes, self._steps, self._control, self._contradicted = sizes, 0, [], set()
        try:
            if launch.wrapper is not None:
                self._bind_params(launch.wrapper, env, self.main, [], {})
                self._run_to(launch.wrapper.child_by_field_name("body"), launch.node, env, self.main)
        except (Unfoldable, Returned, RecursionError):
            pass  # the names bound so far stand
        finally:
            self.sizes = {}
        return env, self._contradicted

    def expression(self, node, env: dict, src: Source):
        """`node` of `src` (e.g. a heuristic's lambda body) folded with `env`; (value, sizes read)."""
        self.used, self._steps, self._control = {}, 0, []
        env = _as_env(env)
        try:
            value = self.value(node, env, ProjectFile(src, None) if src is not self.main.src else self.main)
        except (Unfoldable, Returned, RecursionError):
            value = UNKNOWN
        return value, dict(self.used)

    # -- statements -------------------------------------------------------------------------------

    def _run_to(self, block, target, env, f: ProjectFile) -> None:
        """Run `block`'s statements up to the one holding `target`, entering the blocks around it."""
        for st in block.named_children if block is not None else []:
            holds = st.start_byte <= target.start_byte < st.end_byte
            if not holds:
                if st.start_byte > target.start_byte:
                    return
                if st.type == "assert_statement" and st.named_children:
                    self._must_hold(st.named_children[0], True, env, f)  # `assert BLOCK <= 128`
                try:
                    self._statement(st, env, f, wrapper=True)
                except (Unfoldable, Returned):
                    pass  # a statement we cannot fold, or a `return` on a branch: go on to the launch
                continue
            inner = [c for c in _blocks(st) if c.start_byte <= target.start_byte < c.end_byte]
            if inner:
                if st.type == "if_statement":
                    self._check_way(st, inner[0], env, f)
                self._run_to(inner[0], target, env, f)
            elif st.type == "expression_statement":
                self._statement(st, env, f, wrapper=True, stop=target)
            return

    def _statement(self, st, env, f: ProjectFile, wrapper=False, stop=None) -> None:
        self._steps += 1
        if self._steps > MAX_STEPS:
            raise Unfoldable
        t = st.type
        if t == "expression_statement":
            for e in st.named_children:
                if e.type in ("assignment", "augmented_assignment") and (stop is None or not _contains(e, stop)):
                    self._assign(e, env, f)
            return
        if t in ("pass_statement", "comment", "assert_statement", "global_statement", "nonlocal_statement"):
            return
        if t == "return_statement":
            kids = st.named_children
            value = self.value(kids[0], env, f) if kids else None
            for c in self._control:  # which `return` ran depends on the conditions around it
                self.used.update(c)
            raise Returned(value)
        if t == "if_statement":
            self._if(st, env, f, wrapper)
            return
        if wrapper and t in ("raise_statement", "import_statement", "import_from_statement"):
            return
        raise Unfoldable  # loops, with, try, raise in a helper, nested definitions

    def _if(self, st, env, f: ProjectFile, wrapper: bool) -> None:
        arms = _arms(st)
        orelse = arms.pop()[1] if arms[-1][0] is None else None
        read: dict[str, int] = {}  # the branch taken rests on every condition asked on the way
        for cond, body in arms:
            outer, self.used = self.used, {}
            c = self.value(cond, env, f)
            read.update(self.used)
            self.used = outer
            if c is UNKNOWN or isinstance(c, Size) or c:
                self._branch(body, env, f, wrapper, read)
                return
        if orelse is not None:
            self._branch(orelse, env, f, wrapper, read)

    def _check_way(self, st, taken, env, f: ProjectFile) -> None:
        """The `if` on the way to the launch enters block `taken`: every condition before it must
        come out false and its own true."""
        for cond, body in _arms(st):
            here = body is not None and (body.start_byte, body.end_byte) == (taken.start_byte, taken.end_byte)
            if cond is None:
                return
            self._must_hold(cond, here, env, f)
            if here:
                return

    def _must_hold(self, cond, want: bool, env, f: ProjectFile) -> bool | None:
        """Does `cond` come out `want` on the representative sizes? One that comes out the other way
        adds the sizes it read to `_contradicted`; an undecided one (UNKNOWN, a bare size) is no
        contradiction. The value it came out, or None."""
        outer, self.used = self.used, {}
        try:
            c = self.value(cond, env, f)
        except (Unfoldable, Returned, RecursionError):
            c = UNKNOWN
        read, self.used = self.used, outer
        if c is UNKNOWN or isinstance(c, Size):
            return None
        if bool(c) != want:
            self._contradicted.update(read)
        return bool(c)

    def _branch(self, block, env, f: ProjectFile, wrapper: bool, read: dict) -> None:
        self._control.append(read)
        try:
            self._block(block, env, f, wrapper)
        finally:
            self._control.pop()

    def _block(self, block, env, f: ProjectFile, wrapper: bool) -> None:
        for st in block.named_children if block is not None else []:
            self._statement(st, env, f, wrapper)

    def _assign(self, node, env: Env, f: ProjectFile) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if right is None:
            return
        outer, self.used = self.used, {}
        try:
            if node.type == "augmented_assignment":
                if left.type != "identifier":
                    return
                op = f.src.text_of(node.child_by_field_name("operator")).rstrip("=")
                value = self._arith(op, self.value(left, env, f), self.value(right, env, f))
            else:
                if right.type == "assignment":  # a = b = value
                    self._assign(right, env, f)
                    right = right.child_by_field_name("left")
                value = self.value(right, env, f)
            deps = dict(self.used)
            for c in self._control:
                deps.update(c)
        finally:
            self.used = outer
        self._bind(left, value, env, f, right, deps)

    def _bind(self, target, value, env: Env, f: ProjectFile, right, deps: dict) -> None:
        if target.type == "identifier":
            name = f.src.text_of(target)
            env[name] = Size(name) if isinstance(value, Size) else value
            env.deps[name] = deps
            return
        if target.type == "subscript":  # `kernel_args["BLOCK_ROW"] = BLOCK_ROW` into a dict bound before
            held = env.get(f.src.text_of(target.child_by_field_name("value")))
            key = target.child_by_field_name("subscript")
            k = self.value(key, env, f) if key is not None else UNKNOWN
            if isinstance(held, dict) and isinstance(k, str):
                held[k] = value
                env.deps.setdefault(f"{f.src.text_of(target.child_by_field_name('value'))}[{k}]", deps)
            return
        if target.type in ("pattern_list", "tuple_pattern", "list_pattern"):
            items = [c for c in target.named_children if c.type != "comment"]
            seq = value if isinstance(value, tuple) and len(value) == len(items) else None
            for i, item in enumerate(items):
                v = seq[i] if seq is not None else (Size() if isinstance(value, (Size, Shape)) or _is_shape(right, f)
                                                    else UNKNOWN)
                self._bind(item, v, env, f, None, deps)

    def _bind_params(self, fn, env, f: ProjectFile, args: list, kwargs: dict) -> None:
        params = fn.child_by_field_name("parameters")
        i = 0
        for p in params.named_children if params is not None else []:
            name_node = p if p.type == "identifier" else (p.child_by_field_name("name")
                                                          or next((c for c in p.named_children
                                                                   if c.type == "identifier"), None))
            if name_node is None or p.type in ("list_splat_pattern", "dictionary_splat_pattern"):
                continue
            name = f.src.text_of(name_node)
            default = p.child_by_field_name("value")
            if i < len(args):
                env[name] = args[i]
            elif name in kwargs:
                env[name] = kwargs[name]
            elif default is not None:
                env[name] = self.value(default, env, f)
            else:
                env[name] = Size(name)  # what a caller passes: a size, or a tensor whose size is read
            i += 1

    # -- expressions ------------------------------------------------------------------------------

    def _user_function(self, name: str, args: list, kwargs: dict, f: ProjectFile):
        target, node = f, f.functions.get(name)
        depth = 0
        while node is None and name in target.imports and depth < 3:
            module, there = target.imports[name]
            target = self._files.imported(module, target)
            if target is None:
                return UNKNOWN
            name, node = there, target.functions.get(there)
            depth += 1
        if node is None or self._depth >= MAX_DEPTH:
            return UNKNOWN
        env = Env()
        self._depth += 1
        try:
            self._bind_params(node, env, target, args, kwargs)
            self._block(node.child_by_field_name("body"), env, target, wrapper=False)
        except Returned as r:
            return r.value
        except Unfoldable:
            return UNKNOWN
        finally:
            self._depth -= 1
        return None


def _as_env(names: dict) -> Env:
    env = Env()
    env.update(names)
    return env


def _arms(st) -> list:
    """An if statement's [(condition, block)], its `else` last with condition None."""
    arms = [(st.child_by_field_name("condition"), st.child_by_field_name("consequence"))]
    for alt in st.children_by_field_name("alternative"):
        arms.append((alt.child_by_field_name("condition"), alt.child_by_field_name("consequence"))
                    if alt.type == "elif_clause" else (None, alt.child_by_field_name("body")))
    return arms


def _blocks(st) -> list:
    """The blocks of a compound statement (bodies of if/elif/else, for, while, with, try)."""
    out = []
    for c in st.named_children:
        if c.type == "block":
            out.append(c)
        elif c.type in ("elif_clause", "else_clause", "except_clause", "finally_clause"):
            out.extend(b for b in c.named_children if b.type == "block")
    return out


def _contains(node, inner) -> bool:
    return node.start_byte <= inner.start_byte and inner.end_byte <= node.end_byte


def _is_shape(right, f: ProjectFile) -> bool:
    """Is `right` a tensor's shape (`x.shape`, `x.size()`, or a tuple holding a `*x.shape`)?"""
    if right is None:
        return False
    text = f.src.text_of(right)
    return text.endswith((".shape", ".size()")) or ".shape" in text and right.type == "expression_list"
