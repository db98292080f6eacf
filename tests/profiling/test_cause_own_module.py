"""A module the project holds itself, missed by the import path (a tool's sibling module run with
`python -m`), is named as the project's own file, never offered as a pip install; a module the
project does not hold still is. Real worker, real command, on this CPU-only machine."""

import textwrap

from tritonlens.profiling.project_capture import capture_command

MISSING = "tritonlens_fixture_no_such_module"


def _project(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def test_a_sibling_module_off_the_path_is_the_projects_own_not_a_package_to_install(tmp_path):
    root = _project(tmp_path / "ownmod", {
        "pyproject.toml": '[project]\nname = "ownmod"\n',
        "tools/__init__.py": "",
        "tools/sweep_sizes.py": "SIZES = [128, 256]\n",
        # `python -m tools.run` puts the root on sys.path, not tools/: the flat import misses its sibling
        "tools/run.py": "import sweep_sizes\n",
    })
    outcome = capture_command(root, ["python", "-m", "tools.run"], timeout=120)
    cause = outcome.cause
    assert cause is not None and cause.module == "sweep_sizes" and cause.fix is None
    assert "the project's own tools/sweep_sizes.py, which was not on the import path" in cause.line
    assert "pip install" not in cause.line and cause.kind == "test_failed"


def test_a_module_the_project_does_not_hold_is_still_a_package_to_install(tmp_path):
    root = _project(tmp_path / "ownmod", {
        "pyproject.toml": '[project]\nname = "ownmod"\n',
        "tools/__init__.py": "",
        # a folder of the project that shares the module's name is no module of it (no __init__.py)
        f"tests/{MISSING}/data.txt": "x\n",
        "tools/run.py": f"import {MISSING}\n",
    })
    outcome = capture_command(root, ["python", "-m", "tools.run"], timeout=120)
    cause = outcome.cause
    assert cause.kind == "missing_module" and cause.fix.endswith(f"-m pip install {MISSING}")
