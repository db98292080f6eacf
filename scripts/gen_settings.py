#!/usr/bin/env python
"""Generate the VS Code extension's settings from the server's `Settings` (server/config.py).

Writes client-vscode/package.json's `contributes.configuration` entries for every server setting
(type, default, enum, pattern, range, description, scope) and the untrusted-workspace
`restrictedConfigurations`, keeping the client's own settings (interpreter, trace) where they are;
and client-vscode/src/settingsSchema.ts: the TypeScript types, defaults and constraints the
client validates with.

Usage: python scripts/gen_settings.py [--check]   (--check: exit 1 when the files are stale)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import attrs
from tritonlens.server.config import (
    DEFAULTS,
    SECTION,
    LlmSettings,
    Settings,
    as_json,
    expectation,
    key_of,
    meta_of,
)

REPO = Path(__file__).resolve().parents[1]
PACKAGE_JSON = REPO / "client-vscode" / "package.json"
SCHEMA_TS = REPO / "client-vscode" / "src" / "settingsSchema.ts"
_SCHEMA_KEYS = ("items", "enum", "minimum", "maximum", "pattern")
# The extension's own settings, not the server's: kept in package.json as they are.
CLIENT_SETTINGS = (f"{SECTION}.interpreter", f"{SECTION}.trace.server")
_TS_TYPES = {"string": "string", "integer": "number", "boolean": "boolean", "array": "string[]"}


def flat_fields(cls=Settings, defaults=DEFAULTS, prefix: str = ""):
    """(dotted key below the section, field, default) of every leaf setting, nested objects flattened."""
    for f in attrs.fields(cls):
        key, default = prefix + key_of(f), getattr(defaults, f.name)
        if attrs.has(f.type):
            yield from flat_fields(f.type, default, key + ".")
        else:
            yield key, f, default


def vscode_property(field: attrs.Attribute, default) -> dict:
    meta = meta_of(field)
    schema = meta.schema
    prop = {"type": schema["type"], "default": as_json(default)}
    if meta.scope:
        prop["scope"] = meta.scope
    prop.update({k: schema[k] for k in _SCHEMA_KEYS if k in schema})
    if "pattern" in schema and meta.hint:
        prop["patternErrorMessage"] = meta.hint
    prop["markdownDescription" if meta.markdown else "description"] = meta.description
    return prop


def server_properties() -> dict[str, dict]:
    return {f"{SECTION}.{key}": vscode_property(f, default)
            for key, f, default in flat_fields() if meta_of(f).contributed}


def restricted() -> list[str]:
    return [f"{SECTION}.{key}" for key, f, _ in flat_fields() if meta_of(f).restricted]


def updated_package(package: dict) -> dict:
    """`package` with the server's settings replaced by the generated ones, the client's kept."""
    ours = server_properties()
    old = package["contributes"]["configuration"]["properties"]
    first = next((i for i, k in enumerate(old) if k in ours), len(old))
    client = [k for k in old if k in CLIENT_SETTINGS]
    before = {k: old[k] for k in client if list(old).index(k) < first}
    after = {k: old[k] for k in client if k not in before}
    package["contributes"]["configuration"]["properties"] = {**before, **ours, **after}
    untrusted = package["capabilities"]["untrustedWorkspaces"]
    kept = [k for k in untrusted["restrictedConfigurations"] if k in before or k in after]
    untrusted["restrictedConfigurations"] = kept + [k for k in restricted() if k not in kept]
    return package


def _ts(value) -> str:
    """A TypeScript literal, strings single-quoted as the client's sources write them."""
    value = as_json(value)
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, list):
        return "[" + ", ".join(_ts(v) for v in value) + "]"
    return json.dumps(value)


def _ts_key(key: str) -> str:
    return _ts(key) if "." in key else key


def _ts_interface(name: str, cls, doc: str) -> list[str]:
    lines = [f"/** {doc} */", f"export interface {name} {{"]
    for f in attrs.fields(cls):
        kind = "LlmConfig" if attrs.has(f.type) else _TS_TYPES[meta_of(f).schema["type"]]
        lines += [f"  /** {meta_of(f).description} */", f"  {key_of(f)}: {kind};"]
    return lines + ["}", ""]


def _ts_defaults(obj, indent: str = "  ") -> list[str]:
    lines = []
    for f in attrs.fields(type(obj)):
        v = getattr(obj, f.name)
        if attrs.has(type(v)):
            lines += [f"{indent}{key_of(f)}: {{", *_ts_defaults(v, indent + "  "), f"{indent}}},"]
        else:
            lines.append(f"{indent}{key_of(f)}: {_ts(v)},")
    return lines


def _ts_spec(field: attrs.Attribute) -> str:
    schema = meta_of(field).schema
    parts = [f"type: '{schema['type']}'"]
    if "enum" in schema:
        parts.append(f"enum: {_ts(schema['enum'])}")
    if "minimum" in schema:
        parts += [f"minimum: {schema['minimum']}", f"maximum: {schema['maximum']}"]
    if "pattern" in schema:
        parts.append(f"pattern: {_ts(schema['pattern'])}")
    if "items" in schema:
        parts.append(f"itemPattern: {_ts(schema['items']['pattern'])}")
    parts.append(f"hint: {_ts(expectation(field))}")
    return "{ " + ", ".join(parts) + " }"


def schema_ts() -> str:
    lines = [
        "// Generated by scripts/gen_settings.py from the server's Settings (server/config.py): do not edit.",
        "// The settings contract both sides share; settings.ts maps the editor's settings onto it.",
        "",
        *_ts_interface("LlmConfig", LlmSettings, "The optimizer's LLM (`tritonlens.llm.*`)."),
        *_ts_interface("ServerConfig", Settings, "The server's configuration section \"tritonlens\"."),
        "export const DEFAULTS: ServerConfig = {", *_ts_defaults(DEFAULTS), "};", "",
        "/** A setting's type and constraints: values outside them are reported and replaced by the default. */",
        "export interface SettingSpec {",
        "  type: 'string' | 'integer' | 'boolean' | 'array';",
        "  enum?: readonly string[];",
        "  minimum?: number;",
        "  maximum?: number;",
        "  pattern?: string;",
        "  itemPattern?: string;",
        "  hint: string;",
        "}",
        "",
        "/** Every editor setting the server reads, by its key below `tritonlens.` (\"llm.model\"). */",
        "export const SETTINGS: Readonly<Record<string, SettingSpec>> = {",
        *[f"  {_ts_key(key)}: {_ts_spec(f)}," for key, f, _ in flat_fields() if meta_of(f).contributed],
        "};",
        "",
    ]
    return "\n".join(lines)


def render_package(path: Path = PACKAGE_JSON) -> str:
    package = json.loads(path.read_text(encoding="utf-8"))
    return json.dumps(updated_package(package), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="report stale files instead of writing them")
    args = parser.parse_args(argv)
    stale = []
    for path, text in ((PACKAGE_JSON, render_package()), (SCHEMA_TS, schema_ts())):
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current == text:
            continue
        stale.append(path.relative_to(REPO).as_posix())
        if not args.check:
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print(f"stale: {', '.join(stale)}; run python scripts/gen_settings.py", file=sys.stderr)
        return 1
    for name in stale:
        print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
