"""The `tritonlens check` contract: formats, exit codes, selection, fixes, bad paths."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

FIX = Path(__file__).parent.parent / "fixtures" / "rules" / "TL001"
POS = FIX / "positive_launch_value.py"
NEG = FIX / "negative_powers_of_two.py"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "tritonlens", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def test_json_schema_and_exit_one():
    r = run("check", str(POS), "--format", "json")
    assert r.returncode == 1, r.stderr
    items = json.loads(r.stdout)
    assert items, "expected findings"
    for item in items:
        required = {"path", "line", "column", "end_line", "end_column", "code", "severity", "message", "kernel"}
        assert required <= set(item) <= required | {"confirmed", "unconfirmed"}, item
        # An error is shown only once Triton's front end refused the code, and says so.
        assert item["severity"] != "error" or item["confirmed"], item
        assert item["line"] >= 1 and item["column"] >= 1
        assert item["severity"] in {"error", "warning", "info", "hint"}
    tl001 = [i for i in items if i["code"] == "TL001"]
    assert tl001[0]["line"] == 7 and tl001[0]["kernel"] == "scale_kernel"
    assert "BLOCK=100" in tl001[0]["message"] and "line 12" in tl001[0]["message"]
    # 1-based column of `tl.arange(` on line 7
    assert tl001[0]["column"] == POS.read_text().splitlines()[6].index("tl.arange") + 1


def test_exit_zero_when_clean():
    r = run("check", str(NEG), "--select", "TL001", "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout) == []


def test_select_and_ignore():
    r = run("check", str(POS), "--ignore", "TL001", "--format", "json")
    assert all(i["code"] != "TL001" for i in json.loads(r.stdout))
    r = run("check", str(POS), "--select", "TL001", "--format", "json")
    assert {i["code"] for i in json.loads(r.stdout)} == {"TL001"}


def test_usage_errors_exit_two():
    assert run("check").returncode == 2
    assert run("check", str(POS), "--select", "TL999").returncode == 2
    assert run("check", str(POS), "--format", "xml").returncode == 2
    assert run("rule", "TL999").returncode == 2


def test_unreadable_and_non_python_do_not_stop_the_rest(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello")
    binary = tmp_path / "blob.py"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    r = run("check", str(bad), str(binary), str(tmp_path / "missing.py"), str(POS), "--format", "json")
    assert r.returncode == 1
    assert "not a Python file" in r.stderr and "not UTF-8" in r.stderr and "no such file" in r.stderr
    assert any(i["code"] == "TL001" for i in json.loads(r.stdout))
    only_bad = run("check", str(bad))
    assert only_bad.returncode == 2


def test_sarif_is_valid_2_1_0():
    r = run("check", str(POS), "--format", "sarif")
    doc = json.loads(r.stdout)
    assert doc["version"] == "2.1.0"
    run0 = doc["runs"][0]
    rules = run0["tool"]["driver"]["rules"]
    ids = [x["id"] for x in rules]
    assert "TL001" in ids
    assert all(x["helpUri"].endswith(f"{x['id']}.md") for x in rules)
    res = run0["results"][0]
    assert res["ruleId"] == "TL001" and ids[res["ruleIndex"]] == "TL001"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == 7 and region["startColumn"] >= 1
    assert res["level"] in {"error", "warning", "note"}
    jsonschema = pytest.importorskip("jsonschema")
    schema_path = Path(__file__).parent / "sarif-2.1.0-subset.json"
    jsonschema.validate(doc, json.loads(schema_path.read_text()))


def test_fix_writes_file(tmp_path):
    # TL001's fix changes what each program covers: unsafe, so it needs --unsafe-fixes
    target = tmp_path / "k.py"
    target.write_text(POS.read_text())
    r = run("check", str(target), "--select", "TL001", "--fix", "--unsafe-fixes", "--format", "json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "BLOCK = 128" in target.read_text()


BOTH_FIXES = """import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, n, BLOCK):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float64)
    tl.store(x_ptr + offs, x * 2, mask=offs < n)
"""


def test_fix_applies_safe_fixes_only_unless_asked(tmp_path):
    target = tmp_path / "k.py"
    target.write_text(BOTH_FIXES)
    r = run("check", str(target), "--select", "TL014,TL016", "--fix")
    assert r.returncode == 1, r.stdout + r.stderr  # TL014 remains
    text = target.read_text()
    assert "BLOCK: tl.constexpr" in text  # TL016: safe
    assert "tl.float64" in text  # TL014: unsafe, left alone and announced
    assert "1 unsafe fix not applied (--unsafe-fixes applies them)" in r.stderr
    r = run("check", str(target), "--select", "TL014,TL016", "--fix", "--unsafe-fixes")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "tl.float64" not in target.read_text() and "tl.float32" in target.read_text()


def test_suppression_comment(tmp_path):
    text = POS.read_text().replace("# expect: TL001", "# tritonlens: ignore[TL001]")
    f = tmp_path / "s.py"
    f.write_text(text)
    assert run("check", str(f), "--select", "TL001").returncode == 0
    f.write_text(POS.read_text().replace("# expect: TL001", "# tritonlens: ignore"))
    assert run("check", str(f), "--select", "TL001").returncode == 0
    f.write_text(POS.read_text().replace("# expect: TL001", "# tritonlens: ignore[TL002]"))
    assert run("check", str(f), "--select", "TL001").returncode == 1


def test_rules_and_rule_doc():
    r = run("rules", "--format", "json")
    assert r.returncode == 0
    assert any(x["id"] == "TL001" for x in json.loads(r.stdout))
    d = run("rule", "tl001")
    assert d.returncode == 0
    # the page is rendered from the rule module's docstring, as docs/rules/TL001.md is
    assert d.stdout == (Path(__file__).parents[2] / "docs" / "rules" / "TL001.md").read_text(encoding="utf-8")
    assert "## Fix safety\nThis fix is unsafe" in d.stdout


def test_compile_rules_are_listed_and_documented():
    listed = {x["id"]: x for x in json.loads(run("rules", "--format", "json").stdout)}
    for code in ("TL101", "TL102", "TL103", "TL104", "TL105", "TL106"):
        assert listed[code]["kind"] == "compile"
        doc = run("rule", code)
        assert doc.returncode == 0 and f"# {code}" in doc.stdout


def test_reports_name_the_triton_api_the_rules_read():
    from tritonlens.analysis import tlapi

    version, source = tlapi.active_identity()
    text = run("check", str(POS), "--select", "TL020")
    assert f"Triton API {version} (" in text.stderr
    sarif = json.loads(run("check", str(POS), "--format", "sarif").stdout)
    (triton,) = [e for e in sarif["runs"][0]["tool"]["extensions"] if e["name"] == "triton"]
    assert triton["version"] == version and triton["properties"]["apiSource"] == source
    assert triton["properties"]["summary"].startswith(f"Triton API {version} (")


def test_folders_for_other_backends_are_skipped_unless_named(tmp_path):
    kernel = POS.read_text()
    # A vendor's copy of a package is also named with the vendor as its last word.
    for folder in ("ops", "ops_triton", "backend/_ascend", "backends/cambricon", "attn_triton_amd"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "k.py").write_text(kernel)
    r = run("check", str(tmp_path), "--select", "TL001", "--format", "json", "--no-confirm")
    paths = {Path(i["path"]).parent.name for i in json.loads(r.stdout)}
    assert paths == {"ops", "ops_triton"}, r.stdout
    assert "skipped 3 files in folders for other backends (amd, ascend, cambricon)" in r.stderr
    named = run("check", str(tmp_path / "backend" / "_ascend"), "--select", "TL001", "--format", "json", "--no-confirm")
    assert {Path(i["path"]).parent.name for i in json.loads(named.stdout)} == {"_ascend"}
    assert "skipped" not in named.stderr
