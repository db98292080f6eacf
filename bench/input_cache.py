"""The inputs a generated TritonBench-G harness chose, kept on disk once built. A perf script
builds every size on the host (an int4 matmul's took 40 s), and each fresh worker of an optimize
would pay that again out of its budget; the bench's own process builds them first, the workers
load them."""

from __future__ import annotations

import os

MAX_BYTES = 8 << 30  # larger inputs are built again rather than written out


def _path(folder: str | None, stem: str, keep, cpu: bool) -> str | None:
    if not folder:
        return None
    return os.path.join(folder, f"{stem}_{'_'.join(map(str, keep))}{'_cpu' if cpu else ''}.pt")


def load(folder: str | None, stem: str, keep, cpu: bool):
    """The inputs kept for (stem, keep, cpu), or None."""
    import torch

    path = _path(folder, stem, keep, cpu)
    if path is None or not os.path.isfile(path):
        return None
    return torch.load(path, weights_only=False)  # written by save() below, from the same perf script


def save(folder: str | None, stem: str, keep, cpu: bool, chosen, nbytes: int) -> None:
    import torch

    path = _path(folder, stem, keep, cpu)
    if path is None or nbytes > MAX_BYTES:
        return
    os.makedirs(folder, exist_ok=True)
    part = f"{path}.{os.getpid()}.part"
    torch.save(chosen, part)
    os.replace(part, path)  # a worker reading it meanwhile sees the whole file or none
