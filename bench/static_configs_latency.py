"""What compile-on-save's static fallback costs the server: the configurations read off the model
the analysis already holds for the document, against the cold whole-file analysis the fallback
used to run in the server process (the CLI still does, having no model).

    python bench/static_configs_latency.py        # prints a table, writes bench/results/static_configs_latency.json
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from pathlib import Path

from gen_kernels import generate
from tritonlens.analysis.engine import Analyzer
from tritonlens.profiling.static_configs import static_configs, static_configs_of_text

REPEAT = 5


def _median_s(fn) -> float:
    times = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    text = generate(40)  # 2,000 lines, 40 kernels
    lines = text.count("\n") + 1
    analyzer = Analyzer()
    module = analyzer.analyze(text, doc_id="bench.py").module  # what the server holds after the open
    t0 = time.perf_counter()
    static_configs(module)  # the first call on the model: what is not yet resolved on it, it resolves
    first = time.perf_counter() - t0
    warm = _median_s(lambda: static_configs(module))
    cold = _median_s(lambda: static_configs_of_text(text))
    rows = [{"path": "server: the analysis' model, first call", "ms": round(first * 1000, 2)},
            {"path": "server: the analysis' model, again", "ms": round(warm * 1000, 2)},
            {"path": "cold: Analyzer().analyze + configurations (CLI)", "ms": round(cold * 1000, 2)}]
    print(f"# static configurations of a {lines}-line file ({platform.python_version()}, {os.cpu_count()} CPUs), "
          f"median of {REPEAT}")
    for r in rows:
        print(f"| {r['path']:<50} | {r['ms']:>9.2f} ms |")
    out = Path(__file__).parent / "results" / "static_configs_latency.json"
    out.write_text(json.dumps({"lines": lines, "repeat": REPEAT, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
