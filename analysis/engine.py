"""Analyze a document: parse once, model and check only the kernels that changed.

A kernel's findings depend on its own text, on the functions that launch it and on the file's
imports and module constants. Those bytes (with their line numbers, since findings carry
positions) form the kernel's cache key, so an edit inside one kernel re-checks that kernel only.
"""

from __future__ import annotations

import bisect
import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from .findings import Finding
from .model import Kernel, Module, build_module, is_kernel_definition, _collect_aliases, top_level_definitions
from .rules import RULE_MODULES, KernelContext
from .source import Source, new_parser, reparse
from .suppress import is_suppressed, suppressions

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2, "hint": 3}


@dataclass
class AnalysisResult:
    findings: list[Finding]
    module: Module
    reanalyzed: list[str] = field(default_factory=list)  # kernels modeled afresh (not from cache)
    errors: list[str] = field(default_factory=list)  # internal errors of rules, reported not raised

    @property
    def kernels(self) -> list[Kernel]:
        return self.module.kernels


def _select(select, ignore) -> list[str]:
    codes = list(RULE_MODULES)
    if select:
        wanted = {c.strip().upper() for c in select if c.strip()}
        codes = [c for c in codes if c in wanted or any(c.startswith(w) for w in wanted)]
    if ignore:
        unwanted = {c.strip().upper() for c in ignore if c.strip()}
        codes = [c for c in codes if c not in unwanted and not any(c.startswith(u) for u in unwanted)]
    return codes


class Analyzer:
    """Thread-safe analyzer with a per-kernel cache (LRU, bounded)."""

    def __init__(self, cache_size: int = 512):
        self._cache: OrderedDict[str, tuple[Kernel, list[Finding], list[str]]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._local = threading.local()
        self._trees: OrderedDict[str, tuple[bytes, object]] = OrderedDict()  # doc_id → last (bytes, tree)

    def forget(self, doc_id: str) -> None:
        with self._lock:
            self._trees.pop(doc_id, None)

    def _parser(self):
        p = getattr(self._local, "parser", None)
        if p is None:
            p = self._local.parser = new_parser()
        return p

    def analyze(self, text: str, path: str | None = None, select=None, ignore=None, doc_id: str | None = None,
                target: str | None = None) -> AnalysisResult:
        """Analyze `text`. With `doc_id` (e.g. a document URI) the previous tree of that document
        is reused for an incremental parse."""
        tree = None
        if doc_id is not None:
            with self._lock:
                prev = self._trees.get(doc_id)
            if prev is not None:
                data = text.encode("utf-8", errors="surrogatepass")
                tree = reparse(self._parser(), prev[0], prev[1].copy(), data)
        src = Source(text, tree=tree, parser=self._parser())
        if doc_id is not None:
            with self._lock:
                self._trees[doc_id] = (src.data, src.tree)
                self._trees.move_to_end(doc_id)
                while len(self._trees) > 64:
                    self._trees.popitem(last=False)
        codes = _select(select, ignore)
        aliases = _collect_aliases(src)

        # Top-level layout: function definitions (kernels and wrappers) and the header statements.
        defs = list(top_level_definitions(src))
        starts = [outer.start_byte for outer, _, _ in defs]
        header = hashlib.blake2b(digest_size=16)
        for node in src.root.named_children:
            if node.type not in ("function_definition", "decorated_definition", "class_definition"):
                header.update(f"{node.start_point[0]}:".encode())
                header.update(src.data[node.start_byte:node.end_byte])
        header_key = header.hexdigest()

        kernel_defs = []
        for outer, fn, decorators in defs:
            name_node = fn.child_by_field_name("name")
            if name_node is not None and decorators and is_kernel_definition(decorators, src, aliases):
                kernel_defs.append((outer, src.text_of(name_node)))

        # Where each kernel is launched: one pass over the text for all names (a launch needs
        # `name[`), then the top-level definition or statement holding each match.
        roots: dict[str, list] = {name: [] for _, name in kernel_defs}
        if kernel_defs:
            names = sorted({name for _, name in kernel_defs}, key=len, reverse=True)
            pattern = re.compile(rb"(?<![\w.])(" + b"|".join(re.escape(n.encode()) for n in names) + rb")\s*\[")
            outers = {name: outer for outer, name in kernel_defs}
            for m in pattern.finditer(src.data):
                name = m.group(1).decode()
                i = bisect.bisect_right(starts, m.start()) - 1
                if i >= 0 and defs[i][0].end_byte > m.start():
                    root = defs[i][0]
                else:  # a launch at module level: search the statement that holds it
                    root = next((n for n in src.root.named_children if n.start_byte <= m.start() < n.end_byte), None)
                found = roots[name]
                if root is not None and root != outers[name] and all(root != r for r in found):
                    found.append(root)
        keys: dict[str, str] = {}
        prefix = f"{header_key}|{','.join(codes)}|{target}|".encode()
        for outer, name in kernel_defs:
            h = hashlib.blake2b(prefix, digest_size=16)
            h.update(f"{outer.start_point[0]}:".encode())
            h.update(src.data[outer.start_byte:outer.end_byte])
            for r in roots[name]:
                h.update(f"|{r.start_point[0]}:".encode())
                h.update(src.data[r.start_byte:r.end_byte])
            keys[name] = h.hexdigest()

        with self._lock:
            cached = {name: self._cache[keys[name]] for _, name in kernel_defs if keys[name] in self._cache}
            for name in cached:
                self._cache.move_to_end(keys[name])
        missing = {name for _, name in kernel_defs if name not in cached}
        fresh = build_module(src, only=missing, launch_roots=roots) if missing else None
        module = Module(src=src, aliases=aliases, kernels=[], functions=fresh.functions if fresh else {},
                        constants=fresh.constants if fresh else {})
        if fresh is None:
            full = build_module(src, only=set(), launch_roots={})  # constants only: no launch search
            module.functions, module.constants = full.functions, full.constants

        findings: list[Finding] = []
        errors: list[str] = []
        fresh_by_name = {k.name: k for k in (fresh.kernels if fresh else [])}
        seen_names = set()
        for _, name in kernel_defs:
            if name in seen_names:
                continue  # a redefinition: Python keeps the last one, so do we
            seen_names.add(name)
            if name in cached:
                kernel, kfind, kerr = cached[name]
            else:
                kernel = fresh_by_name.get(name)
                if kernel is None:
                    continue
                kfind, kerr = self._check(module, kernel, codes, target)
                with self._lock:
                    self._cache[keys[name]] = (kernel, kfind, kerr)
                    while len(self._cache) > self._cache_size:
                        self._cache.popitem(last=False)
            module.kernels.append(kernel)
            findings.extend(kfind)
            errors.extend(kerr)

        table = suppressions(text)
        if table:
            findings = [f for f in findings if not is_suppressed(f, table)]
        findings.sort(key=lambda f: (f.range.start.line, f.range.start.column, _SEVERITY_ORDER[f.severity.value], f.code))
        return AnalysisResult(findings, module, sorted(missing), errors)

    @staticmethod
    def _check(module: Module, kernel: Kernel, codes: list[str], target: str | None = None) -> tuple[list[Finding], list[str]]:
        out: list[Finding] = []
        errors: list[str] = []
        for code in codes:
            rule_module = RULE_MODULES[code]
            ctx = KernelContext(module, kernel, rule_module.RULE, target)
            try:
                seen = set()
                for f in rule_module.check(ctx):
                    key = (f.code, f.range, f.message)
                    if key not in seen:
                        seen.add(key)
                        out.append(f)
            except Exception as exc:  # a rule bug must not take the analysis down
                errors.append(f"{code} failed on {kernel.name}: {type(exc).__name__}: {exc}")
        return out, errors


_default = Analyzer()


def analyze(text: str, path: str | None = None, select=None, ignore=None, target: str | None = None) -> AnalysisResult:
    """Analyze with a process-wide analyzer (and its cache)."""
    return _default.analyze(text, path=path, select=select, ignore=ignore, target=target)
