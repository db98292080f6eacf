"""The steps of profiling/kernel_reach's name graph: which project names each file's names are made
from (its re-exports, the names its code reads, the modules it dispatches to by string), and how a
test file's imports, reads and strings meet the names that reach a kernel."""

from __future__ import annotations

from dataclasses import dataclass

from tritonlens.profiling.kernel_reach import (
    ROUTE_DIRECT, ROUTE_DISPATCH, ROUTE_REEXPORT, ROUTE_SELF, ROUTE_UMBRELLA, ROUTE_WRAPPER, Node, ReachGraph,
    TestRoute,
)


def widest(reads) -> list[str]:
    """The reads no other read extends (`pkg.ops.f`, not `pkg` or `pkg.ops`): a read of a package on
    the way to one of its names is no use of the whole package."""
    ordered = sorted(reads)
    return [r for i, r in enumerate(ordered) if not (i + 1 < len(ordered) and ordered[i + 1].startswith(r + "."))]


def link_file(reach: ReachGraph, f: str) -> None:
    facts = reach.facts[f]
    for e in reach.g.top_edges(f):  # re-exports: the module's own name for what it imports
        if e.name == "*":
            if e.target is not None:
                for n in reach.names.get(e.target, ()):
                    if not n.startswith("_"):
                        reach._add((e.target, n), (f, n), ROUTE_REEXPORT)
        elif e.name is None:  # only `import a.b as m` names the module; `import a.b` binds `a` on the way
            if e.bound != e.module.split(".")[0] and e.target is not None:
                reach._add((e.target, None), (f, e.bound), ROUTE_REEXPORT)
        else:
            if e.target is not None:
                reach._add((e.target, e.name), (f, e.bound), ROUTE_REEXPORT)
            if e.submodule is not None:
                reach._add((e.submodule, None), (f, e.bound), ROUTE_REEXPORT)
    for owner, reads in facts.refs.items():
        for r in widest(reads):
            t = reach.token(f, r)
            if t is not None and t != (f, owner):
                reach._add(t, (f, owner), ROUTE_WRAPPER)
    for n in reach.names.get(f, ()):
        reach._add((f, n), (f, None), 0)
    keyed = []
    for site in facts.sites:
        for target, key in reach.site_targets(f, site):
            if target == f:
                continue
            note = f"dispatches '{key}' to" if key else "names by string"
            if not site.hole:  # an f-string's module is the one its caller names: known by the key alone
                reach._add((target, None), (f, site.owner), ROUTE_DISPATCH, note)
            if key:
                keyed.append((key, target))
                for owner, strings in facts.strings.items():
                    if owner != site.owner and key in strings:
                        reach._add((target, None), (f, owner), ROUTE_DISPATCH, note)
    if keyed:
        reach.keyed[f] = tuple(dict.fromkeys(keyed))


@dataclass(frozen=True)
class _TestFacts:
    direct: frozenset[str]  # files its imports name
    tokens: tuple[Node, ...]  # project names it imports or reads
    strings: frozenset[str]
    loaded: frozenset[str]


def _test_facts(reach: ReachGraph, tf: str) -> _TestFacts:
    cached = reach.test_cache.get(tf)
    if cached is not None:
        return cached
    direct: set[str] = set()
    tokens: list[Node] = []
    for e in reach.g.edges.get(tf, ()):
        direct |= {t for t in (e.target, e.submodule) if t}
        if e.name == "*" and e.target is not None:
            tokens += [(e.target, n) for n in reach.names.get(e.target, ())]
        elif e.name is not None:
            if e.target is not None:
                tokens.append((e.target, e.name))
            if e.submodule is not None:
                tokens.append((e.submodule, None))
    reads = set().union(*reach.facts[tf].refs.values()) if reach.facts[tf].refs else set()
    tokens += [t for r in widest(reads) if (t := reach.token(tf, r)) is not None and t[0] != tf]
    out = _TestFacts(frozenset(direct), tuple(dict.fromkeys(tokens)), reach.facts[tf].all_strings, reach.loaded(tf))
    reach.test_cache[tf] = out
    return out


def test_route(reach: ReachGraph, best, kernel: str, tf: str) -> TestRoute | None:
    """How test file `tf` reaches `kernel` given `best` = reach.reach(kernel), or None."""
    rel = reach.rel(tf)
    if tf == kernel:
        return TestRoute(rel, ROUTE_SELF, 0, ())
    facts = _test_facts(reach, tf)
    if kernel in facts.direct:
        return TestRoute(rel, ROUTE_DIRECT, 1, (reach.rel(kernel),))
    found: list[tuple[int, int, tuple[str, ...]]] = []
    for t in facts.tokens:
        if t in best:
            route, steps = best[t][:2]
            found.append((route, steps + 1, reach.chain(best, t)))
    for f in facts.loaded | facts.direct:
        for key, target in reach.keyed.get(f, ()):
            if key in facts.strings and (target, None) in best:
                route, steps = best[(target, None)][:2]
                found.append((max(route, ROUTE_DISPATCH), steps + 2,
                              (reach.rel(f), f"dispatches '{key}' to", *reach.chain(best, (target, None)))))
    if not found and kernel in facts.loaded:
        found.append((ROUTE_UMBRELLA, len(facts.loaded), (reach.rel(kernel),)))
    if not found:
        return None
    route, steps, via = min(found)
    return TestRoute(rel, route, steps, via)

