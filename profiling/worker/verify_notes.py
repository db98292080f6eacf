"""What a reference's comparisons leave out, and why: the notes a candidate's evidence carries
(the original not deterministic, elements it never writes, its own out-of-bounds writes, guard
zones made finite for it). Standalone: a plain file of the worker folder."""

from __future__ import annotations


def reference_notes(ref: dict) -> list:
    """[(kind, text)]: what a reference's comparisons leave out, and why."""
    notes = []
    runs = 2 + ref["extra_runs"]
    for mask, counts in zip(ref["masks"], ref["counts"]):
        if mask is None or counts is None:
            continue
        where, numel, n_blank, moving = counts
        compared = numel - n_blank - moving
        if moving:
            notes.append(("unstable", f"the original is not deterministic: {moving} of {numel} elements of the "
                          f"{where} differ between {'two' if runs == 2 else runs} runs; compared the "
                          f"{compared} deterministic ones"))
        if n_blank and n_blank < numel:
            notes.append(("unwritten", f"{where}: compared only the {numel - n_blank} elements the original "
                          f"writes ({n_blank} left unwritten)"))
    if ref.get("oob_writes"):
        notes.append(("oob", "the original itself writes out of bounds on these inputs ("
                      + sorted(ref["oob_writes"])[0] + "); the same writes by the candidate are not held against it"))
    if ref.get("finite_guards"):
        notes.append(("guards", "the original reads past the ends of its buffers where its result does not depend "
                                "on what it reads (NaN there made every output NaN): the zones around each buffer "
                                "hold finite values, so a candidate's reads past an end are not caught, its writes are"))
    return notes
