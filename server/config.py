"""The "tritonlens" settings section: the one schema, parsing, validation and per-folder scoping.

`Settings` is the source of the settings contract: each field carries its JSON key, its JSON
schema, its description and hint; scripts/gen_settings.py generates the VS Code extension's
`contributes.configuration` and the client's TypeScript types and defaults from it.

Settings arrive three ways (initializationOptions, workspace/configuration,
workspace/didChangeConfiguration). They are structured by a strict cattrs converter, each field
on its own: a bad value is reported and replaced by its default, so one typo never disables the
server or the other settings.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, override
from tritonlens.analysis.gpus import ARCHS, DEFAULT_GPU
from tritonlens.analysis.gpus import names as gpu_names
from tritonlens.rewrite import llm_client

SECTION = "tritonlens"

_RULE_ID = r"^TL\d{3}$"
_SELECTOR = r"^(TL\d{3}|ALL)$"
# One spelling for both sides: JSON schema patterns are ECMAScript, and this one reads the same there.
_BACKEND = r"^(local|ray|ray://[^\s/:]+(:\d+)?|ssh://([^\s@/]+@)?[^\s@/:]+(:\d+)?)$"
_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


@attrs.frozen
class SettingMeta:
    """What a settings field declares besides its type and default."""

    description: str
    schema: dict  # the value's JSON schema: type, enum, pattern, minimum, maximum, items
    key: str = ""  # the JSON key, when it is not the field's name
    hint: str = ""  # what a valid value looks like, for messages
    markdown: bool = False  # the description is markdown
    scope: str = ""  # VS Code's configuration scope, when not the default
    restricted: bool = False  # read from user settings only in an untrusted workspace
    contributed: bool = True  # an editor setting (False: the client sets it itself)


def setting(default: Any, description: str, *, schema: dict, **declared):
    """A settings field with its SettingMeta (see there for `declared`)."""
    return attrs.field(default=default, metadata={SettingMeta: SettingMeta(description, schema, **declared)})


def meta_of(field: attrs.Attribute) -> SettingMeta:
    return field.metadata[SettingMeta]


def _bool(description: str, default: bool, **kw):
    return setting(default, description, schema={"type": "boolean"}, hint="must be true or false", **kw)


@attrs.frozen
class LlmSettings:
    """The optimizer's LLM; its defaults are the engine's (rewrite/llm_client.py), which the CLI shares."""

    base_url: str = setting(
        "", "OpenAI-compatible endpoint used by the optimizer to propose rewrites. Empty: no LLM proposals.",
        key="baseUrl", schema={"type": "string"}, hint="must be a URL or \"\"", restricted=True)
    model: str = setting("", "Model name sent to the LLM endpoint.", schema={"type": "string"},
                         hint="must be a string")
    api_key_env: str = setting(
        "OPENAI_API_KEY",
        "Name of the environment variable the server reads the LLM API key from. The key itself is stored "
        "with **tritonlens: Set LLM API key** (VS Code secret storage), never in settings. Changing it "
        "restarts the server.",
        key="apiKeyEnv", schema={"type": "string", "pattern": _ENV_NAME}, markdown=True,
        hint="must be an environment variable name")
    candidates: int = setting(
        llm_client.LLMSettings.candidates, "Rewrites asked for in parallel in each round (concurrent requests); all are "
        "verified and the best is kept.", schema={"type": "integer", "minimum": 1, "maximum": 16})
    rounds: int = setting(
        3, "Propose → verify rounds at most. After an accepted rewrite, each round tries to beat the best "
        "so far (on a GPU); a round that gains less than 2% ends the search.",
        schema={"type": "integer", "minimum": 1, "maximum": 20})
    max_tokens: int = setting(
        0, "Token limit of one reply (max_tokens); 0: the server's default. Raise it when replies are cut "
        "off: reasoning models spend thousands of tokens before answering.", key="maxTokens",
        schema={"type": "integer", "minimum": 0, "maximum": 1_000_000})
    token_budget: int = setting(
        llm_client.LLMSettings.token_budget, "Tokens (the replies' total_tokens) one optimize may spend; 0: no limit.",
        key="tokenBudget", schema={"type": "integer", "minimum": 0, "maximum": 1_000_000_000})
    time_budget_s: int = setting(
        int(llm_client.LLMSettings.time_budget_s), "Seconds the LLM rounds of one optimize may take; 0: no limit.",
        key="timeBudgetS", schema={"type": "integer", "minimum": 0, "maximum": 86_400})
    timeout_s: int = setting(
        int(llm_client.LLMSettings.timeout), "Seconds one LLM request may take.", key="timeoutS",
        schema={"type": "integer", "minimum": 1, "maximum": 3600})
    system_role: str = setting(
        "auto", "How the instructions are sent: `auto` (a system message, folded into the first user message "
        "when the server refuses the system role), `system`, or `user` (always folded, for chat templates "
        "without a system role).", key="systemRole", markdown=True,
        schema={"type": "string", "enum": list(llm_client.SYSTEM_ROLES)})


@attrs.frozen
class Settings:
    select: tuple[str, ...] = setting(
        (), "Rule ids to report (e.g. `TL005`, or `ALL`); empty reports the default rule set "
        "(`tritonlens rules` marks the rules that are off by default).", markdown=True,
        schema={"type": "array", "items": {"type": "string", "pattern": _SELECTOR}},
        hint="must be a list of rule ids like \"TL005\" or \"ALL\"")
    ignore: tuple[str, ...] = setting(
        (), "Rule ids never to report.", schema={"type": "array", "items": {"type": "string", "pattern": _RULE_ID}},
        hint="must be a list of rule ids like \"TL005\"")
    target_gpu: str = setting(
        DEFAULT_GPU, "GPU the static estimates (roofline, shared memory) are made for.", key="targetGpu",
        schema={"type": "string", "enum": list(gpu_names())})
    debounce_ms: int = setting(
        200, "Milliseconds of quiet after an edit before the file is analyzed again.", key="debounceMs",
        schema={"type": "integer", "minimum": 0, "maximum": 10_000})
    profile_on_save: bool = _bool(
        "Profile the file's kernels each time it is saved (runs its harness on the profiling backend).", False,
        key="profileOnSave")
    compile_on_save: bool = _bool(
        "Cross-compile the file's kernels on save for compiler facts (registers, spills, shared memory).", True,
        key="compileOnSave")
    capture_tests: bool = _bool(
        "When a file's kernels have no recorded launch, run the project's tests that reach them once (in a worker, "
        "under Triton's interpreter without a GPU) and record their launches for compile facts, profile and "
        "optimize.", True, key="captureTests", restricted=True)
    compile_target: str = setting(
        "sm_90", "Architecture kernels are cross-compiled for.", key="compileTarget",
        schema={"type": "string", "enum": list(ARCHS)})
    backend: str = setting(
        "local", "Where kernels are profiled: `local`, `ssh://[user@]host[:port]`, `ray` (the cluster this "
        "machine belongs to) or `ray://host:port`.", markdown=True, restricted=True,
        schema={"type": "string", "pattern": _BACKEND},
        hint="must be local, ssh://[user@]host[:port], ray or ray://host:port")
    python: str = setting(
        "", "The project's Python, used by the profiling worker (on the backend host for ssh/ray) and to read "
        "its Triton's API. Empty: the server's own interpreter.", schema={"type": "string"},
        scope="machine-overridable", restricted=True, hint="must be a path to a Python interpreter or \"\"")
    ncu: bool = _bool("Collect Nsight Compute metrics when profiling (needs ncu on the backend).", False,
                      restricted=True)
    line_samples: bool = _bool(
        "When profiling on a GPU, also sample where each kernel's warps stall, line by line, and show its hottest "
        "lines as hints. Costs a separate sampling replay of each kernel's first launch under Nsight Compute (ncu "
        "on the backend); the timings are taken before it and do not change.", False, key="lineSamples",
        restricted=True)
    inlay_hints: bool = _bool("Show resolved constexpr values and estimates as inlay hints.", True,
                              key="inlayHints")
    timeout_s: int = setting(
        120, "Seconds one profiling or verification job may run before its worker is stopped.", key="timeoutS",
        schema={"type": "integer", "minimum": 1, "maximum": 3600})
    optimize_budget_s: int = setting(
        120, "Seconds one optimize may take in all (every verification and config timing in it); the best "
        "rewrite proven by then is offered. 0: no limit. With an LLM endpoint, its timeBudgetS is added.",
        key="optimizeBudgetS", schema={"type": "integer", "minimum": 0, "maximum": 86400})
    llm: LlmSettings = setting(attrs.Factory(LlmSettings), "The optimizer's LLM.",  # noqa: RUF009 (an attrs field)
                               schema={"type": "object"})
    # False only when the client says the workspace is untrusted: nothing then runs its code.
    trusted: bool = _bool("False in an untrusted workspace: the server runs none of the workspace's code.",
                          True, contributed=False)

    def analysis_key(self) -> tuple:
        """What the static analysis depends on: a change here means re-publishing. The Triton API
        the rules check against is part of it: when the project's API arrives, results must be
        recomputed even though no setting changed."""
        from tritonlens.analysis import tlapi

        return (self.select, self.ignore, self.target_gpu, tlapi.active_identity())


attrs.resolve_types(LlmSettings)
attrs.resolve_types(Settings)
DEFAULTS = Settings()


def key_of(field: attrs.Attribute) -> str:
    return meta_of(field).key or field.name


def expectation(field: attrs.Attribute) -> str:
    meta = meta_of(field)
    schema = meta.schema
    if meta.hint:
        return meta.hint
    if "enum" in schema:
        return f"must be one of {', '.join(schema['enum'])}"
    if schema["type"] == "integer":
        return f"must be an integer from {schema['minimum']} to {schema['maximum']}"
    return f"must be a {schema['type']}"


def _checker(field: attrs.Attribute):
    """The structure hook of one field: the strict type, then the schema's constraints."""
    schema, expect = meta_of(field).schema, expectation(field)
    kind = schema["type"]

    def check(value, _type):
        if kind == "boolean" and not isinstance(value, bool):
            raise TypeError(expect)
        if kind == "integer" and (not isinstance(value, int) or isinstance(value, bool)
                                  or not schema["minimum"] <= value <= schema["maximum"]):
            raise ValueError(expect)
        if kind == "string":
            if not isinstance(value, str):
                raise TypeError(expect)
            if "enum" in schema:  # names are matched without regard to case, kept as the table spells them
                value = next((e for e in schema["enum"] if e.upper() == value.strip().upper()), None)
                if value is None:
                    raise ValueError(expect)
            if "pattern" in schema and not re.match(schema["pattern"], value):
                raise ValueError(expect)
        if kind == "array":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise TypeError(expect)
            value = tuple(dict.fromkeys(v.strip().upper() for v in value))
            if not all(re.match(schema["items"]["pattern"], v) for v in value):
                raise ValueError(expect)
        return value

    return check


def _converter() -> cattrs.Converter:
    conv = cattrs.Converter(detailed_validation=True, forbid_extra_keys=False)
    for cls in (LlmSettings, Settings):  # the nested class first: the outer hook takes it up
        overrides = {f.name: override(rename=key_of(f), struct_hook=None if attrs.has(f.type) else _checker(f))
                     for f in attrs.fields(cls)}
        conv.register_structure_hook(cls, _object_only(make_dict_structure_fn(cls, conv, **overrides)))
    return conv


def _object_only(hook):
    def structure(value, cls):
        if not isinstance(value, dict):
            raise TypeError(f"must be an object with {', '.join(_known_keys(cls))}")
        return hook(value, cls)

    return structure


_CONVERTER = _converter()


def _known_keys(cls) -> list[str]:
    return [key_of(f) for f in attrs.fields(cls)]


def as_json(value):
    """A settings value in its JSON form: objects with camelCase keys, lists for tuples."""
    if attrs.has(type(value)):
        return {key_of(f): as_json(getattr(value, f.name)) for f in attrs.fields(type(value))}
    return list(value) if isinstance(value, tuple) else value


def _brief(value, limit: int = 60) -> str:
    """A user's value as the message quotes it: whole when short, else its start."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _reset_bad(exc: cattrs.ClassValidationError, raw: dict, cls, defaults, path: str, problems: list[str]) -> None:
    """Put each failing field of `raw` back to its default, saying why; nested objects field by field."""
    fields = attrs.fields_dict(cls)
    bad, _ = exc.group_exceptions()
    for error, note in bad:
        field = fields[note.name]
        key = key_of(field)
        default = getattr(defaults, field.name)
        if isinstance(error, cattrs.ClassValidationError) and isinstance(raw.get(key), dict):
            _reset_bad(error, raw[key], field.type, default, f"{path}{key}.", problems)
            continue
        shown = "its defaults" if attrs.has(type(default)) else repr(as_json(default))  # one short line
        problems.append(f"`{path}{key}`: {error}, got {_brief(raw.get(key))}; using {shown}")
        raw[key] = as_json(default)


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
    merged = as_json(base)
    for key, value in raw.items():
        if key == "llm" and isinstance(value, dict):
            merged["llm"] = {**merged["llm"], **value}
        elif key in merged:
            merged[key] = value
    try:
        settings = _CONVERTER.structure(merged, Settings)
    except cattrs.ClassValidationError as exc:
        _reset_bad(exc, merged, Settings, DEFAULTS, "", problems)
        settings = _CONVERTER.structure(merged, Settings)
    unknown = sorted(set(raw) - set(_known_keys(Settings)))
    if isinstance(raw.get("llm"), dict):
        unknown += [f"llm.{k}" for k in sorted(set(raw["llm"]) - set(_known_keys(LlmSettings)))]
    if unknown:
        problems.append(f"unknown settings ignored: {', '.join(unknown)}")
    return settings, problems


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
