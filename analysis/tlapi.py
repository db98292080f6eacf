"""What Triton's Python API looks like, per Triton version: names, signatures, first doc paragraphs.

Never hand-typed. Two sources:
- the project's own Triton, introspected in a subprocess with the project's Python
  (api_introspect.py) and cached on disk per Triton version;
- snapshots generated from the real wheels by scripts/gen_api_snapshot.py, shipped as package data
  (api_snapshots/triton-<version>.json.gz), used when the project's Triton cannot be introspected.

Pure: this module never imports triton itself.
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SNAPSHOT_DIR = Path(__file__).parent / "api_snapshots"
INTROSPECT_SCRIPT = Path(__file__).parent / "api_introspect.py"

# How user code spells each module (prefix after the alias is resolved by the kernel model).
MODULE_KEYS = {
    "": "triton.language",  # tl.load
    "math": "triton.language.math",
    "extra.libdevice": "triton.language.extra.libdevice",
    "extra.cuda.libdevice": "triton.language.extra.cuda.libdevice",
    "random": "triton.language.random",
}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "p" positional-only, "pk", "k" keyword-only, "*" varargs, "**" varkw
    default: str | None = None

    @property
    def required(self) -> bool:
        return self.default is None and self.kind in ("p", "pk", "k")


@dataclass(frozen=True)
class ApiEntry:
    module: str  # "triton.language"
    name: str
    kind: str  # function, class, dtype, module, constant, method, property
    signature: str | None
    params: tuple[Param, ...] | None
    doc: str

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.name}"

    def display(self, prefix: str | None = None) -> str:
        """`tl.load(pointer, mask=None, …)` style, with the caller's prefix."""
        head = prefix if prefix is not None else self.qualname
        return head + (self.signature or "")


def _version_key(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else 0 for x in re.split(r"[.+-]", v)[:3])


class ApiIndex:
    def __init__(self, data: dict, source: str):
        self.version: str = data["triton_version"]
        self.source = source  # "snapshot" or "introspected (<python>)"
        self._modules: dict[str, dict] = {}
        raw = data["modules"]
        for mod, members in raw.items():
            if isinstance(members, dict) and "$same_as" in members:
                members = raw.get(members["$same_as"], {})
            self._modules[mod] = members
        self._entries: dict[tuple[str, str], ApiEntry] = {}

    def modules(self) -> list[str]:
        return list(self._modules)

    def names(self, module: str) -> list[str]:
        return sorted(self._modules.get(module, {}))

    def get(self, module: str, name: str) -> ApiEntry | None:
        key = (module, name)
        e = self._entries.get(key)
        if e is not None:
            return e
        raw = self._modules.get(module, {}).get(name)
        if raw is None:
            return None
        params = None
        if raw.get("params") is not None:
            params = tuple(_param(p) for p in raw["params"])
        e = ApiEntry(module, name, raw.get("kind", "unknown"), raw.get("signature"), params, raw.get("doc", ""))
        self._entries[key] = e
        return e

    def members(self, module: str) -> list[ApiEntry]:
        return [self.get(module, n) for n in self.names(module)]

    def lookup_tl(self, tlname: str) -> ApiEntry | None:
        """A canonical tl name from the kernel model ("load", "math.exp", "extra.libdevice.exp")."""
        module, name = split_tl(tlname)
        return self.get(module, name) if module in self._modules else None

    def suggest(self, module: str, name: str, n: int = 3) -> list[str]:
        return difflib.get_close_matches(name, self.names(module), n=n, cutoff=0.6)

    def same_api(self, other: ApiIndex) -> bool:
        """The same names, kinds and signatures: what the rules and completion read (docs aside).
        A snapshot and an introspection of one Triton version are usually the same API."""
        return self.version == other.version and self._shape() == other._shape()

    def _shape(self) -> dict:
        return {(m, e.name): (e.kind, e.signature, e.params) for m in self.modules() for e in self.members(m)}


_KINDS = {"POSITIONAL_ONLY": "p", "POSITIONAL_OR_KEYWORD": "pk", "KEYWORD_ONLY": "k", "VAR_POSITIONAL": "*",
          "VAR_KEYWORD": "**"}


def _param(p) -> Param:
    """A parameter in the snapshot's compact form [name, kind, default?] or introspection's dict."""
    if isinstance(p, dict):
        return Param(p["name"], _KINDS.get(p["kind"], p["kind"]), p.get("default"))
    return Param(p[0], p[1], p[2] if len(p) > 2 else None)


def split_tl(tlname: str) -> tuple[str, str]:
    head, _, name = tlname.rpartition(".")
    return MODULE_KEYS.get(head, "triton.language." + head if head else "triton.language"), name


# ---------------------------------------------------------------------------------------------
# snapshots


def snapshot_versions() -> list[str]:
    out = []
    for p in SNAPSHOT_DIR.glob("triton-*.json.gz"):
        out.append(p.name[len("triton-"):-len(".json.gz")])
    return sorted(out, key=_version_key)


@lru_cache(maxsize=8)
def load_snapshot(version: str) -> ApiIndex:
    path = SNAPSHOT_DIR / f"triton-{version}.json.gz"
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return ApiIndex(json.load(f), "snapshot")


def nearest_snapshot(version: str | None) -> str:
    """The snapshot for `version`: the same version, else the newest not newer than it with the
    same major.minor, else the newest not newer, else the oldest."""
    versions = snapshot_versions()
    if not versions:
        raise FileNotFoundError(f"no API snapshots in {SNAPSHOT_DIR}")
    if version is None:
        return versions[-1]
    if version in versions:
        return version
    want = _version_key(version)
    older = [v for v in versions if _version_key(v) <= want]
    same_minor = [v for v in older if _version_key(v)[:2] == want[:2]]
    if same_minor:
        return same_minor[-1]
    return older[-1] if older else versions[0]


def all_snapshots() -> list[ApiIndex]:
    return [load_snapshot(v) for v in snapshot_versions()]


# ---------------------------------------------------------------------------------------------
# the project's own Triton


def _cache_root() -> Path:
    return Path(os.environ.get("TRITONLENS_CACHE", Path.home() / ".cache" / "tritonlens")) / "api"


def installed_version(python: str | None = None, timeout: float = 20) -> str | None:
    """Triton's version in `python` (default: this interpreter), read from package metadata
    without importing triton."""
    if not python or python == sys.executable:
        try:
            from importlib.metadata import PackageNotFoundError, version

            try:
                return version("triton")
            except PackageNotFoundError:
                return None
        except Exception:
            return None
    code = ("import importlib.metadata as m\ntry:\n print(m.version('triton'))\nexcept Exception:\n print('')")
    try:
        out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    v = out.stdout.strip()
    return v or None


def introspect(python: str | None = None, timeout: float = 120) -> ApiIndex | None:
    """The API of the Triton importable by `python`, introspected in a subprocess and cached on
    disk per Triton version (introspecting imports triton: about a second)."""
    py = python or sys.executable
    version = installed_version(python)
    if version is None:
        return None
    # Per interpreter as well as per version: two environments with one Triton version may still
    # differ (a patched or locally built Triton), and each must be read from its own.
    where = hashlib.sha1(os.path.abspath(py).encode()).hexdigest()[:12]
    cache = _cache_root() / f"triton-{version}-{where}.json"
    if cache.is_file():
        try:
            return ApiIndex(json.loads(cache.read_text()), f"introspected ({py})")
        except (OSError, ValueError, KeyError):
            pass
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    try:
        out = subprocess.run([py, "-s", str(INTROSPECT_SCRIPT)], capture_output=True, text=True, timeout=timeout,
                             env=env, cwd=str(_cache_root().parent) if _cache_root().parent.is_dir() else None)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    try:
        data = json.loads(out.stdout)
    except ValueError:
        return None
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(cache)
    except OSError:
        pass
    return ApiIndex(data, f"introspected ({py})")


_active_lock = threading.Lock()
_active: ApiIndex | None = None


def set_active(index: ApiIndex | None) -> None:
    """The API the rules check against (the server sets it from the project's Python)."""
    global _active
    with _active_lock:
        _active = index


@lru_cache(maxsize=1)
def _default_snapshot() -> str:
    return nearest_snapshot(installed_version())


def active() -> ApiIndex:
    """The API in use: what was set, else the snapshot for the Triton installed beside us
    (metadata only, no import), else the newest snapshot."""
    global _active
    with _active_lock:
        if _active is None:
            _active = load_snapshot(_default_snapshot())
        return _active


def active_identity() -> tuple[str, str]:
    """Which API the rules check against: a new one means their findings must be recomputed.
    Cheap (no snapshot is loaded), so the event loop may ask."""
    with _active_lock:
        if _active is not None:
            return _active.version, _active.source
    return _default_snapshot(), "snapshot"


def resolve(python: str | None) -> ApiIndex:
    """The best API for a project: introspected from its Python when Triton is importable there,
    else the nearest snapshot to its Triton version, else the newest snapshot."""
    idx = introspect(python)
    if idx is not None:
        return idx
    return load_snapshot(nearest_snapshot(installed_version(python)))


def history(module: str, name: str) -> list[tuple[str, bool]]:
    """(version, present) across the shipped snapshots, oldest first."""
    return [(idx.version, idx.get(module, name) is not None) for idx in all_snapshots()]


# ---------------------------------------------------------------------------------------------
# removals

# A builtin Triton keeps as a stub that only raises says so in its first doc paragraph
# (3.9's make_block_ptr: "Block pointers have been removed. Use a tensor descriptor instead.").
_REMOVED_DOC = re.compile(r"\b(?:has|have) been removed\b", re.IGNORECASE)

# Names and keywords that belong to one removed feature: their uses are one problem to a reader,
# reported once per file. Only the grouping is written here; what is gone is read from the API.
_FEATURES = {
    ("triton.language", "make_block_ptr"): "block-pointers",
    ("triton.language", "advance"): "block-pointers",
    ("triton.language", "load", "boundary_check"): "block-pointers",
    ("triton.language", "load", "padding_option"): "block-pointers",
    ("triton.language", "store", "boundary_check"): "block-pointers",
}

# Where a math function can live, in the order a replacement is suggested, and how code names it.
_MATH_HOMES = (
    ("triton.language.math", "tl.math."),
    ("triton.language", "tl."),
    ("triton.language.extra.libdevice", "libdevice."),
    ("triton.language.extra.cuda.libdevice", "libdevice."),
)


def removed_stub(entry: ApiEntry | None) -> bool:
    """A name the API still has whose body only raises that the feature was removed."""
    return entry is not None and removed_stub_text(entry.doc or "")


def removed_stub_text(doc: str) -> bool:
    return bool(_REMOVED_DOC.search(doc))


def working_in(module: str, name: str, keyword: str | None = None) -> list[str]:
    """The snapshot versions where `module.name` exists, is no removal stub, and (with
    `keyword`) takes that keyword; oldest first."""
    out = []
    for idx in all_snapshots():
        e = idx.get(module, name)
        if e is None or removed_stub(e):
            continue
        if keyword is not None and not (e.params and any(p.name == keyword for p in e.params)):
            continue
        out.append(idx.version)
    return out


def removed_feature(module: str, name: str, keyword: str | None = None) -> str | None:
    """The feature a removed name or keyword belonged to ("block pointers"), if it is known."""
    feature = _FEATURES.get((module, name, keyword) if keyword else (module, name))
    return feature.replace("-", " ") if feature else None


def removal_key(module: str, name: str, keyword: str | None = None) -> str:
    """The key under which the uses of one removed API in a file are reported once."""
    feature = _FEATURES.get((module, name, keyword) if keyword else (module, name))
    if feature:
        return "removed:" + feature
    return f"removed:{module}.{name}" + (f"({keyword}=)" if keyword else "")


def math_homes(api: ApiIndex, name: str, exclude: str | None = None) -> list[str]:
    """How code spells `name` in the modules of `api` that hold it as a function ("tl.math.erf",
    "libdevice.erf"), `exclude` left out: where a function moved to."""
    out = []
    for module, prefix in _MATH_HOMES:
        e = api.get(module, name)
        if module != exclude and e is not None and e.kind == "function" and not removed_stub(e):
            spelled = prefix + name
            if spelled not in out:
                out.append(spelled)
    return out
