"""The "tritonlens" settings section: parsing, validation and per-folder scoping.

Settings arrive three ways (initializationOptions, workspace/configuration,
workspace/didChangeConfiguration). Each value is checked on its own: a bad value is reported and
replaced by its default, so one typo never disables the server or the other settings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

SECTION = "tritonlens"

_RULE_ID = re.compile(r"^TL\d{3}$")
_BACKEND = re.compile(r"^(local|ray|ray://[^\s/:]+(:\d+)?|ssh://([^\s@/]+@)?[^\s@/:]+(:\d+)?)$")
_TARGET = re.compile(r"^sm_\d{2,3}a?$")
KNOWN_GPUS = ("H100", "H200", "A100", "L40S", "B200")


@dataclass(frozen=True)
class LlmSettings:
    base_url: str = ""
    model: str = ""
    api_key_env: str = "OPENAI_API_KEY"


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()  # empty: every rule
    ignore: tuple[str, ...] = ()
    target_gpu: str = "H100"
    debounce_ms: int = 200
    profile_on_save: bool = False
    compile_on_save: bool = True
    compile_target: str = "sm_90"
    backend: str = "local"
    python: str = ""  # "" = the server's own interpreter
    ncu: bool = False
    inlay_hints: bool = True
    llm: LlmSettings = field(default_factory=LlmSettings)
    timeout_s: int = 120  # per profiling / verification job; the worker is killed after it
    # False only when the client says the workspace is untrusted: nothing then runs its code.
    trusted: bool = True

    def analysis_key(self) -> tuple:
        """What the static analysis depends on: a change here means re-publishing."""
        return (self.select, self.ignore, self.target_gpu)


DEFAULTS = Settings()


def _rule_list(name: str, value: Any, problems: list[str]) -> tuple[str, ...] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"`{name}` must be a list of rule ids like \"TL005\", got {value!r}")
        return None
    bad = [v for v in value if not _RULE_ID.match(v.strip().upper())]
    if bad:
        problems.append(f"`{name}` has invalid rule ids {bad!r} (expected e.g. \"TL005\")")
        return None
    return tuple(dict.fromkeys(v.strip().upper() for v in value))


def parse_settings(raw: Any, base: Settings = DEFAULTS) -> tuple[Settings, list[str]]:
    """Validate a raw settings object; return the settings and human-readable problems.

    `raw` may be the section itself or an object holding a "tritonlens" key. Keys that are
    absent keep the value from `base`; keys that are invalid fall back to the default.
    """
    problems: list[str] = []
    if raw is None:
        return base, problems
    if isinstance(raw, dict) and isinstance(raw.get(SECTION), dict):
        raw = raw[SECTION]
    if not isinstance(raw, dict):
        return DEFAULTS, [f"settings must be an object, got {type(raw).__name__}"]

    values: dict[str, Any] = {}

    def take(key: str, attr: str, check, message: str, convert=lambda v: v):
        if key not in raw:
            return
        value = raw[key]
        if check(value):
            values[attr] = convert(value)
        else:
            problems.append(f"`{key}`: {message}, got {value!r}; using {getattr(DEFAULTS, attr)!r}")
            values[attr] = getattr(DEFAULTS, attr)

    for key in ("select", "ignore"):
        if key in raw:
            parsed = _rule_list(key, raw[key], problems)
            values[key] = parsed if parsed is not None else getattr(DEFAULTS, key)

    def is_bool(v):
        return isinstance(v, bool)

    take("targetGpu", "target_gpu", lambda v: isinstance(v, str) and v.upper() in KNOWN_GPUS,
         f"must be one of {', '.join(KNOWN_GPUS)}", lambda v: v.upper())
    take("debounceMs", "debounce_ms",
         lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 10_000,
         "must be an integer number of milliseconds between 0 and 10000")
    take("profileOnSave", "profile_on_save", is_bool, "must be true or false")
    take("compileOnSave", "compile_on_save", is_bool, "must be true or false")
    take("compileTarget", "compile_target", lambda v: isinstance(v, str) and bool(_TARGET.match(v)),
         "must look like \"sm_90\"")
    take("backend", "backend", lambda v: isinstance(v, str) and bool(_BACKEND.match(v)),
         "must be \"local\", \"ssh://[user@]host[:port]\", \"ray\" or \"ray://host:port\"")
    take("python", "python", lambda v: isinstance(v, str), "must be a path to a Python interpreter or \"\"")
    take("ncu", "ncu", is_bool, "must be true or false")
    take("inlayHints", "inlay_hints", is_bool, "must be true or false")
    take("timeoutS", "timeout_s", lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 3600,
         "must be an integer number of seconds between 1 and 3600")
    take("trusted", "trusted", is_bool, "must be true or false")

    if "llm" in raw:
        llm_raw = raw["llm"]
        if not isinstance(llm_raw, dict):
            problems.append(f"`llm` must be an object with baseUrl, model, apiKeyEnv, got {llm_raw!r}")
            values["llm"] = DEFAULTS.llm
        else:
            llm = base.llm
            for key, attr in (("baseUrl", "base_url"), ("model", "model"), ("apiKeyEnv", "api_key_env")):
                if key in llm_raw:
                    if isinstance(llm_raw[key], str):
                        llm = replace(llm, **{attr: llm_raw[key]})
                    else:
                        problems.append(f"`llm.{key}` must be a string, got {llm_raw[key]!r}")
                        llm = replace(llm, **{attr: getattr(DEFAULTS.llm, attr)})
            values["llm"] = llm

    known = {"select", "ignore", "targetGpu", "debounceMs", "profileOnSave", "compileOnSave",
             "compileTarget", "backend", "python", "ncu", "inlayHints", "llm", "timeoutS", "trusted"}
    unknown = sorted(set(raw) - known)
    if unknown:
        problems.append(f"unknown settings ignored: {', '.join(unknown)}")
    return replace(base, **values), problems


def _folder_entries(raw: list) -> tuple[list[tuple[str, Any]], list[str]]:
    """A per-folder list: [{"scopeUri"|"uri": folder, "settings": {...}}, ...]; an entry with
    no folder is the global scope."""
    entries, problems = [], []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            problems.append(f"initializationOptions[{i}] must be an object, got {item!r}")
            continue
        scope = item.get("scopeUri", item.get("uri", ""))
        if not isinstance(scope, str):
            problems.append(f"initializationOptions[{i}].scopeUri must be a string, got {scope!r}")
            continue
        body = item.get("settings", item.get(SECTION))
        if body is None:
            body = {k: v for k, v in item.items() if k not in ("scopeUri", "uri")}
        entries.append((scope.rstrip("/"), body))
    return entries, problems


class SettingsStore:
    """Global settings plus per-folder overrides; a document takes its longest matching folder."""

    def __init__(self):
        self.global_settings = DEFAULTS
        self.folders: dict[str, Settings] = {}

    def for_uri(self, uri: str | None) -> Settings:
        if uri:
            best = ""
            for folder in self.folders:
                if (uri == folder or uri.startswith(folder + "/")) and len(folder) > len(best):
                    best = folder
            if best:
                return self.folders[best]
        return self.global_settings

    def all(self) -> list[Settings]:
        return [self.global_settings, *self.folders.values()]

    def load_initialization_options(self, options: Any) -> list[str]:
        if options is None:
            return []
        if isinstance(options, list):
            entries, problems = _folder_entries(options)
            for scope, body in entries:
                problems += self.set_scope(scope, body)
            return problems
        settings, problems = parse_settings(options)
        self.global_settings = settings
        return problems

    def set_scope(self, scope: str, raw: Any) -> list[str]:
        scope = (scope or "").rstrip("/")
        if not scope:
            settings, problems = parse_settings(raw)
            self.global_settings = settings
            return problems
        # A folder's settings start from the global ones, as editors resolve them.
        settings, problems = parse_settings(raw, self.global_settings)
        self.folders[scope] = settings
        return [f"{scope}: {p}" for p in problems]
