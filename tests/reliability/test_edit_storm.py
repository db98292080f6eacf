"""Edit storm: 1,000 didChange notifications as fast as the client can send them (bench/stress.py
runs the same storm and records its figures). Afterwards the published diagnostics are exactly
those of tritonlens.analysis on the final text, no publication goes back to an older version,
every request sent during the storm is answered, and RSS stays flat: the caches fill during the
first half, and the second half adds less than 15 MB (a leak that grows with each edit would add
about as much as the first half). With no debounce every edit is analysed and the caches are
still filling at the 500th edit (a 1,000-edit storm added 38 MB, then 14–18 MB), so that storm is
2,000 edits long: its second half adds about 3 MB."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest
from rel_client import REPO

pytestmark = pytest.mark.slow


def _stress():
    spec = importlib.util.spec_from_file_location("tritonlens_bench_stress", REPO / "bench" / "stress.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(("debounce_ms", "edits"), [(0, 2000), (200, 1000)])  # 0: every change races the last
def test_edit_storm(debounce_ms, edits):
    res = asyncio.run(_stress().storm(edits=edits, debounce_ms=debounce_ms))
    print(res)
    assert res["alive_after"] and res["exit_code"] == 0, res
    assert res["requests_answered"] == res["requests_sent"] >= 45 and not res["request_errors"], res
    assert res["last_published_version"] == res["final_version"] == edits + 1, res
    assert res["final_matches_analysis"], res["mismatch"]
    assert res["final_differs_from_initial"], "the storm must end on diagnostics the first version did not have"
    assert not res["published_versions_regressions"], res["published_versions_regressions"]
    assert res["rss_delta_mb"] <= 80, res
    assert res["rss_second_half_mb"] <= 15, res
