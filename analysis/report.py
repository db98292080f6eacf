"""Render findings: text for people, JSON for tools, SARIF 2.1.0 for code scanning."""

from __future__ import annotations

import json
from pathlib import Path

from tritonlens import __version__

from . import tlapi
from .findings import Finding
from .rules import ALL_RULES as RULES
from .rules.rule_docs import page

_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note", "hint": "note"}


def triton_api() -> dict:
    """The Triton API the rules checked names and signatures against: its version, where it was
    read (a snapshot shipped with tritonlens, or introspected from a Python), and the Triton
    installed beside tritonlens (None when there is none)."""
    version, source = tlapi.active_identity()
    return {"version": version, "source": source, "installed": tlapi.installed_version()}


def api_header(api: dict | None = None) -> str:
    """One line naming the API the rules used, for the top of a report."""
    api = api or triton_api()
    if api["source"] != "snapshot":
        where = api["source"]
    elif api["installed"] == api["version"]:
        where = f"snapshot of the installed Triton {api['installed']}"
    elif api["installed"]:
        where = f"nearest snapshot to the installed Triton {api['installed']}"
    else:
        where = "newest snapshot: no Triton installed beside tritonlens"
    return f"Triton API {api['version']} ({where})"


def to_text(results: list[tuple[str, list[Finding]]]) -> str:
    lines = []
    for path, findings in results:
        for f in findings:
            kernel = f" [{f.kernel}]" if f.kernel else ""
            severity = f.severity.value + (" (unconfirmed)" if "unconfirmed" in f.data else "")
            lines.append(f"{path}:{f.range.start.line + 1}:{f.range.start.column + 1}: {f.code} {severity}{kernel}: {f.message}")
    return "\n".join(lines)


# What Triton's front end said about an error finding: why it stands, or why it could not be asked.
_VERDICT_KEYS = ("confirmed", "unconfirmed")


def to_json(results: list[tuple[str, list[Finding]]]) -> str:
    return json.dumps([{**f.to_json(path), **{k: f.data[k] for k in _VERDICT_KEYS if k in f.data}}
                       for path, findings in results for f in findings], indent=2)


def to_sarif(results: list[tuple[str, list[Finding]]], root: Path | None = None) -> str:
    codes = sorted({f.code for _, fs in results for f in fs} | set(RULES))
    rules_meta = []
    index = {}
    for code in codes:
        info = RULES.get(code)
        index[code] = len(rules_meta)
        meta = {
            "id": code,
            "name": (info.name if info else code).replace("-", " ").title().replace(" ", ""),
            "shortDescription": {"text": info.summary if info else code},
            "defaultConfiguration": {"level": _SARIF_LEVEL[info.severity.value] if info else "warning"},
        }
        if info:
            meta["helpUri"] = info.help_uri
            meta["help"] = {"text": info.summary, "markdown": page(info)}
        rules_meta.append(meta)
    sarif_results = []
    for path, findings in results:
        uri = Path(path).as_posix()
        if root is not None:
            try:
                uri = Path(path).resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                pass
        for f in findings:
            r = f.range
            sarif_results.append({
                "ruleId": f.code,
                "ruleIndex": index[f.code],
                "level": _SARIF_LEVEL[f.severity.value],
                "message": {"text": f.message},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": uri, **({"uriBaseId": "%SRCROOT%"} if root is not None else {})},
                        "region": {
                            "startLine": r.start.line + 1,
                            "startColumn": r.start.column + 1,
                            "endLine": r.end.line + 1,
                            "endColumn": r.end.column + 1,
                        },
                    }
                }],
                **({"properties": {"kernel": f.kernel}} if f.kernel else {}),
            })
    api = triton_api()
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "tritonlens",
                    "version": __version__,
                    "informationUri": "https://github.com/tritonlens/tritonlens",
                    "rules": rules_meta,
                },
                # The Triton whose API the rules read: a component of the run, as SARIF names one.
                "extensions": [{"name": "triton", "version": api["version"],
                                "properties": {"apiSource": api["source"], "installed": api["installed"],
                                               "summary": api_header(api)}}],
            },
            "results": sarif_results,
            **({"originalUriBaseIds": {"%SRCROOT%": {"uri": root.resolve().as_uri() + "/"}}} if root is not None else {}),
        }],
    }
    return json.dumps(doc, indent=2)
