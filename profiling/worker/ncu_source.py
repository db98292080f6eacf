"""Parse Nsight Compute's source page (`ncu --import R.ncu-rep --page source --csv`) into the
sampled instructions of one kernel. Standard library only: this file travels with the worker folder.

Two views of the same report are read:
- `--print-source sass`: one row per SASS instruction ("Address", "Source", "Warp Stall Sampling
  (All Samples)", and one "stall_<reason>" column per stall reason, plus "(Not Issued)" twins);
- `--print-source cuda,sass`: the same instructions under the source line ncu correlated them with
  ("File Path" rows open each file's table, a row with a "Line No" heads its instructions). That line
  is the innermost one: code inlined from a helper names the helper's line.
Addresses are absolute; an instruction's offset is its distance from the kernel's first one, which
is what `nvdisasm` prints for the same cubin.
"""

from __future__ import annotations

import csv
import io
import re

try:  # imported as tritonlens.profiling.worker.ncu_source
    from .line_profile import SassSample, SassSamples
    from .ncu_csv import NcuCsvError, number
except ImportError:  # a plain file in the worker folder
    from line_profile import SassSample, SassSamples
    from ncu_csv import NcuCsvError, number

ALL_SAMPLES = "Warp Stall Sampling (All Samples)"
_STALL_COLUMN = re.compile(r"^stall_(\w+)$")  # all samples of that reason; "(Not Issued)" twins skipped


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def _address(text: str) -> int | None:
    try:
        return int(text, 16)
    except ValueError:
        return None


def parse_sass(text: str, where: dict[int, tuple[str, int]] | None = None) -> SassSamples:
    """The sass view: every instruction with its samples; the result keeps the sampled ones, each
    with its innermost source line from `where` (innermost_lines' map) when given."""
    rows = _rows(text)
    kernel = next((r[1] for r in rows if len(r) >= 2 and r[0] == "Kernel Name"), "")
    header_at = next((i for i, r in enumerate(rows) if r and r[0] == "Address"), None)
    if header_at is None:
        raise NcuCsvError("ncu's source page has no 'Address' column: was SourceCounters collected?")
    header = rows[header_at]
    col = {name: i for i, name in enumerate(header)}
    if ALL_SAMPLES not in col:
        raise NcuCsvError(f"ncu's source page has no {ALL_SAMPLES!r} column")
    stall_cols = {m.group(1): i for name, i in col.items() if (m := _STALL_COLUMN.match(name))}
    first = None
    out = SassSamples(kernel=kernel)
    for row in rows[header_at + 1:]:
        if len(row) < len(header):
            continue
        address = _address(row[col["Address"]])
        if address is None:
            continue
        first = address if first is None else min(first, address)
        samples = int(number(row[col[ALL_SAMPLES]]) or 0)
        out.total_samples += samples
        if not samples:
            continue
        stalls = {}
        for reason, i in stall_cols.items():
            n = int(number(row[i]) or 0)
            if n:
                stalls[reason] = n
        file, line = (where or {}).get(address, (None, None))
        out.instructions.append(SassSample(offset=address, sass=row[col["Source"]].strip(), samples=samples,
                                           stalls=stalls, file=file, line=line))
    for ins in out.instructions:
        ins.offset -= first or 0
    return out


def innermost_lines(text: str) -> dict[int, tuple[str, int]]:
    """The cuda,sass view: {absolute address: (file, line)} for every instruction it lists."""
    out: dict[int, tuple[str, int]] = {}
    file = None
    line = None
    for row in _rows(text):
        if len(row) >= 2 and row[0] == "File Path":
            file, line = row[1], None
            continue
        if len(row) < 4 or row[0] == "Line No":
            continue
        if row[0].strip().isdigit():
            line = int(row[0])
            continue
        address = _address(row[2])
        if address is not None and file is not None and line is not None:
            out[address] = (file, line)
    return out


def parse(sass_view: str, cuda_sass_view: str | None) -> SassSamples:
    """Both views of one report: the sampled instructions, each with its innermost source line."""
    return parse_sass(sass_view, innermost_lines(cuda_sass_view) if cuda_sass_view else None)
