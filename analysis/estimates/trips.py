"""Loop trip counts: `range` bounds evaluated in a configuration, runtime sizes the caller gives
included (the shape engine's run of that configuration, which the rules read too)."""

from __future__ import annotations

from ..model import Config, Kernel, Module, TlCall
from ..shapes import infer_kernel
from ..values import cdiv


class TripEvaluator:
    """Integers of a kernel's loop bounds in one configuration."""

    def __init__(self, kernel: Kernel, module: Module, config: Config | None):
        self.shapes = infer_kernel(module, kernel)
        self.config = config
        self.src = kernel.src
        self._ints: dict = {}

    def int_of(self, node) -> int | None:
        if node is None:
            return None
        if node in self._ints:
            return self._ints[node]
        v = self.shapes.constant_at(node, self.config)
        out = v if isinstance(v, int) and not isinstance(v, bool) else None
        self._ints[node] = out
        return out

    def loop_trips(self, loop) -> int | None:
        if loop.kind not in ("range", "tl.range", "tl.static_range") or not loop.args:
            return None
        args = [self.int_of(a) for a in loop.args[:3]]
        if any(a is None for a in args):
            return None
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            (start, stop), step = args, 1
        else:
            start, stop, step = args
        if step == 0:
            return None
        return max(0, cdiv(stop - start, step))

    def trips(self, call: TlCall, notes: list[str], noted: set) -> int | None:
        """Product of the trip counts of the loops around `call`; None (and a note, once per
        loop) when one is unknown."""
        total = 1
        for loop in call.loops:
            t = self.loop_trips(loop)
            if t is None:
                line = loop.range.start.line + 1
                if line not in noted:
                    noted.add(line)
                    what = "a while loop" if loop.kind == "while" else f"the loop at line {line}"
                    bound = self.src.text_of(loop.args[1] if len(loop.args) > 1 else loop.args[0]) if loop.args else ""
                    notes.append(f"figures are per iteration of {what}" + (
                        f" (trip count depends on `{bound}`, unknown statically)" if bound else " (trip count unknown statically)"))
                return None
            total *= t
        return total

    def loop_stages(self, loop) -> int | None:
        """`tl.range(..., num_stages=S)` overrides the kernel's num_stages for that loop."""
        right = loop.node.child_by_field_name("right")
        args = right.child_by_field_name("arguments") if right is not None and right.type == "call" else None
        for a in (args.named_children if args else []):
            if a.type == "keyword_argument" and self.src.text_of(a.child_by_field_name("name")) == "num_stages":
                return self.int_of(a.child_by_field_name("value"))
        return None


def trip_evaluator(kernel: Kernel, module: Module, config: Config | None) -> TripEvaluator:
    """One evaluator per kernel, module and configuration, shared by the estimates and the rules
    (TL009, TL013 ask in the same configurations)."""
    held = kernel.__dict__.get("_tl_trip_evals")
    if held is None or held[0] is not module:
        # Only the latest module's: a cached kernel outlives many analyses and must not keep
        # every earlier module (and its tree) alive.
        held = kernel.__dict__["_tl_trip_evals"] = (module, {})
    evals = held[1]
    hit = evals.get(id(config))
    if hit is not None and hit[0] is config:
        return hit[1]
    ev = TripEvaluator(kernel, module, config)
    evals[id(config)] = (config, ev)
    return ev
