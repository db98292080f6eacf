"""Calls of @triton.jit helpers in the shape engine: the helper's body interpreted with the
caller's arguments. A constexpr the caller passes stays a constexpr in the helper, annotated or
not (Triton specializes the call on it), so a helper's shapes are its caller's, and a shape
conflict in the helper with those values is the caller's (recorded at the call).
"""

from __future__ import annotations

from ..values import UNKNOWN
from .abstract import NONE_ABS, UNKNOWN_ABS, Abs, Sym, join

MAX_CALL_DEPTH = 4


class JitCalls:
    """Mixin of the Interpreter: calls of the file's @triton.jit functions."""

    def jit_call(self, name: str, n, args, kwargs, env) -> Abs:
        vals, kv = self._eval_args(args, kwargs, env)
        if self.depth >= MAX_CALL_DEPTH:
            return UNKNOWN_ABS
        fn, src = self.jit[name]
        key = (name, tuple(vals), tuple(sorted(kv.items())))
        hit = self.memo.get(key)
        if hit is not None:
            out, found = hit
            for prob in found:
                self.helper_problem(prob, n)
            return out
        self.memo[key] = (UNKNOWN_ABS, ())  # recursion: unknown
        params = fn.child_by_field_name("parameters")
        env2: dict = {}
        consts: dict = {}
        i = 0
        for p in (params.named_children if params else []):
            if p.type == "identifier":
                pname, ann, default = src.text_of(p), None, None
            elif p.type in ("typed_parameter",):
                idn = next((c for c in p.named_children if c.type == "identifier"), None)
                pname, ann, default = (src.text_of(idn) if idn else None), p.child_by_field_name("type"), None
            elif p.type in ("default_parameter", "typed_default_parameter"):
                pname, ann, default = src.text_of(p.child_by_field_name("name")), p.child_by_field_name("type"), p.child_by_field_name("value")
            else:
                return UNKNOWN_ABS
            if pname is None:
                continue
            if i < len(vals):
                v = vals[i]
            elif pname in kv:
                v = kv[pname]
            elif default is not None:
                sub = type(self)(self.module, src, {}, None, jit_functions=self.jit, depth=self.depth + 1, memo=self.memo)
                v = sub.expr(default, {})
            else:
                v = UNKNOWN_ABS
            i += 1
            if ann is not None and "constexpr" in src.text_of(ann):
                consts[pname] = v.value if v.weak and v.value is not UNKNOWN else Sym(pname)
            else:
                env2[pname] = v
        sub = type(self)(self.module, src, consts, None, jit_functions=self.jit, depth=self.depth + 1, memo=self.memo)
        sub.found = []
        body = fn.child_by_field_name("body")
        if body is not None:
            sub.body(body, env2)
        out = NONE_ABS
        if sub.returns:
            out = sub.returns[0]
            for r in sub.returns[1:]:
                out = join(out, r)
        self.memo[key] = (out, tuple(sub.found))
        for prob in sub.found:
            self.helper_problem(prob, n)
        return out
