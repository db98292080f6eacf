"""Analyze a document: parse once, model and check only the kernels that changed.

A kernel's findings depend on its own text, on the functions that launch it and on the file's
imports and module constants. Those bytes (with their line numbers, since findings carry
positions) form the kernel's cache key, so an edit inside one kernel re-checks that kernel only.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from . import tlapi
from .findings import Finding
from .model import Kernel, Module, _collect_aliases, build_kernels, is_kernel_definition
from .rules import RULE_MODULES, KernelContext
from .source import Source, new_parser, reparse
from .suppress import is_suppressed, suppressions

_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2, "hint": 3}
# Bytes that cannot be part of a Python identifier become spaces (UTF-8 bytes of non-ASCII
# identifiers stay), so `bytes.split()` yields a statement's words.
_NON_WORD = bytes(c if c >= 0x80 or chr(c).isalnum() or c == 0x5F else 0x20 for c in range(256))


@functools.lru_cache(maxsize=4096)
def _launch_re(name: str) -> re.Pattern:
    return re.compile(rb"(?<![\w.])" + re.escape(name.encode()) + rb"\s*\[")


def _closure(name: str, uses: dict[str, set[str]]) -> list[str]:
    """Top-level functions `name` refers to, directly or through the jit helpers it refers to."""
    out, todo = set(), list(uses.get(name, ()))
    while todo:
        n = todo.pop()
        if n in out or n == name:
            continue
        out.add(n)
        todo.extend(uses.get(n, ()))
    return sorted(out)


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


KERNEL_VERSIONS_KEPT = 3  # cached versions of one kernel of one document


class Analyzer:
    """Thread-safe analyzer with a per-kernel cache (LRU, bounded)."""

    def __init__(self, cache_size: int = 512):
        self._cache: OrderedDict[str, tuple[Kernel, list[Finding], list[str]]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self._local = threading.local()
        self._trees: OrderedDict[str, tuple] = OrderedDict()  # doc_id → last (bytes, tree, (settings, result))
        self._words: dict[bytes, frozenset] = {}  # the last text's top-level statements → their words
        self._decorators: dict[bytes, bool] = {}  # the last text's decorator lines → whether they make a kernel
        self._decorators_for = ""  # the imports (aliases) those answers hold for
        # Cache keys of each (document, kernel), newest last: while a kernel is typed in, every
        # keystroke makes a new entry, each holding the whole file's tree; older versions of a
        # kernel are seldom asked for again (an undo is), so only a few are kept.
        self._versions: dict[tuple, list[str]] = {}

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
        is reused for an incremental parse, and the same text under the same settings returns the
        previous findings without any work besides comparing the bytes."""
        codes = _select(select, ignore)
        api = tlapi.active()
        # Everything a finding depends on besides the text: rules, target GPU, Triton API in use.
        settings = f"{','.join(codes)}|{target}|{api.version}|{api.source}"
        tree = None
        data = None
        if doc_id is not None:
            with self._lock:
                prev = self._trees.get(doc_id)
            if prev is not None:
                data = text.encode("utf-8", errors="surrogatepass")
                if prev[0] == data:
                    last = prev[2]
                    if last is not None and last[0] == settings:
                        res = last[1]
                        return AnalysisResult(list(res.findings), res.module, [], list(res.errors))
                    tree = prev[1]  # same bytes: the tree is the same, no parse at all
                else:
                    tree = reparse(self._parser(), prev[0], prev[1], data)[0]
        src = Source(text, tree=tree, parser=self._parser()) if data is None else Source(text, tree=tree, data=data)
        result = self._analyze_source(src, text, codes, target, settings, doc=path or doc_id)
        if doc_id is not None:
            with self._lock:
                self._trees[doc_id] = (src.data, src.tree, (settings, result))
                self._trees.move_to_end(doc_id)
                while len(self._trees) > 64:
                    self._trees.popitem(last=False)
        return result

    def _analyze_source(self, src: Source, text: str, codes: list[str], target: str | None, settings: str,
                        doc: str | None = None) -> AnalysisResult:
        aliases = _collect_aliases(src)
        data = src.data

        # Top-level layout in one pass: function definitions (kernels, helpers, wrappers), the
        # header statements (imports, constants: every kernel depends on them) and module constants.
        defs = []  # (outer, function_definition, decorators)
        functions: dict = {}
        constants: dict[str, list] = {}
        header = hashlib.blake2b(digest_size=16)
        text_of = src.text_of
        children = src.root.named_children  # one list: its nodes are compared by identity below
        for node in children:
            t = node.type
            if t == "function_definition":
                defs.append((node, node, []))
                continue
            if t == "decorated_definition":
                fn = node.child_by_field_name("definition")
                if fn is not None and fn.type == "function_definition":
                    defs.append((node, fn, [c for c in node.named_children if c.type == "decorator"]))
                continue
            if t == "class_definition":
                continue
            header.update(b"%d:" % node.start_point[0])
            header.update(data[node.start_byte:node.end_byte])
            if t == "expression_statement":
                a = node.named_children[0] if node.named_children else None
                if a is not None and a.type == "assignment":
                    left = a.child_by_field_name("left")
                    right = a.child_by_field_name("right")
                    if left is not None and left.type == "identifier" and right is not None:
                        constants.setdefault(text_of(left), []).append(right)

        kernel_defs = []  # (outer, fn, decorators, name)
        plain: dict[str, object] = {}  # undecorated top-level functions (TL019 reads their names)
        jit: dict[str, tuple] = {}  # first definition of each @triton.jit name (shape inference inlines them)
        # Whether decorators make a kernel depends only on their text and the imports: remembered
        # for this version's definitions, so a keystroke does not re-read every decorator.
        alias_key = repr(aliases)
        if self._decorators_for != alias_key:
            self._decorators, self._decorators_for = {}, alias_key
        jit_memo, jit_now = self._decorators, {}
        for outer, fn, decorators in defs:
            name_node = fn.child_by_field_name("name")
            if name_node is None:
                continue
            name = text_of(name_node)
            is_kernel = False
            if decorators:
                head = data[outer.start_byte:fn.start_byte]
                is_kernel = jit_memo.get(head)
                if is_kernel is None:
                    is_kernel = is_kernel_definition(decorators, src, aliases)
                jit_now[head] = is_kernel
            if is_kernel:
                kernel_defs.append((outer, fn, decorators, name))
                jit.setdefault(name, (fn, src))
            else:
                functions[name] = fn
                if not decorators:
                    plain[name] = outer

        # Which top-level names each top-level statement mentions (its words, split in C): a kernel's
        # launches (`name[`) sit in the statements mentioning it, and a kernel mentioning a jit
        # helper or a plain function depends on it (a helper's text and a plain function's
        # existence change the kernel's findings, so they belong to its key).
        roots: dict[str, list] = {name: [] for _, _, _, name in kernel_defs}
        uses: dict[str, set[str]] = {}
        outer_names = {id(outer): name for outer, _, _, name in kernel_defs}
        outers = {name: outer for outer, _, _, name in kernel_defs}  # a redefinition: the last one
        kernel_words = {name.encode(): name for name in roots}
        referable = {name.encode(): name for name in plain} | kernel_words
        memo, words_now = self._words, {}
        for node in children:
            chunk = data[node.start_byte:node.end_byte]
            words = memo.get(chunk)
            if words is None:
                words = frozenset(chunk.translate(_NON_WORD).split())
            words_now[chunk] = words
            own = outer_names.get(id(node))
            if own is not None:
                uses.setdefault(own, set()).update(referable[w] for w in words & referable.keys() if referable[w] != own)
            for w in words & kernel_words.keys():
                name = kernel_words[w]
                if node is not outers[name] and _launch_re(name).search(data, node.start_byte, node.end_byte):
                    roots[name].append(node)

        # Only this version's statements are remembered: each entry holds a statement's text (a
        # whole kernel while it is typed in) and its words; keeping earlier versions up to a fixed
        # count held ~40 MB after an edit storm.
        self._words = words_now
        self._decorators = jit_now
        keys: dict[str, str] = {}
        prefix = f"{header.hexdigest()}|{settings}|".encode()
        for outer, _, _, name in kernel_defs:
            h = hashlib.blake2b(prefix, digest_size=16)
            h.update(b"%d:" % outer.start_point[0])
            h.update(data[outer.start_byte:outer.end_byte])
            for r in roots[name]:
                h.update(b"|%d:" % r.start_point[0])
                h.update(data[r.start_byte:r.end_byte])
            for dep in _closure(name, uses):
                if dep in jit:
                    fn = jit[dep][0]
                    h.update(f"|jit {dep}@{fn.start_point[0]}:".encode())
                    h.update(data[fn.start_byte:fn.end_byte])
                else:
                    h.update(f"|def {dep}".encode())
            keys[name] = h.hexdigest()

        with self._lock:
            cached = {}
            for _, _, _, name in kernel_defs:
                hit = self._cache.get(keys[name])
                if hit is not None:
                    cached[name] = hit
                    self._cache.move_to_end(keys[name])
        missing = {name for _, _, _, name in kernel_defs if name not in cached}
        module = Module(src=src, aliases=aliases, kernels=[], functions=functions, constants=constants)
        module._tritonlens_jit_functions = jit
        module.memo["tl019.plain_functions"] = set(plain)
        fresh_by_name = {}
        if missing:
            for k in build_kernels(module, [d for d in kernel_defs if d[3] in missing], roots):
                fresh_by_name[k.name] = k

        findings: list[Finding] = []
        errors: list[str] = []
        seen_names = set()
        for _, _, _, name in kernel_defs:
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
                    versions = self._versions.setdefault((doc, name), [])
                    versions.append(keys[name])
                    while len(versions) > KERNEL_VERSIONS_KEPT:
                        self._cache.pop(versions.pop(0), None)
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
