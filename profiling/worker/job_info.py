"""Job "info": what this interpreter can run kernels on. Standalone (torch + triton only)."""

from __future__ import annotations

import os
import platform
import sys


def device_info() -> dict:
    import torch
    import triton

    info = {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "host": platform.node(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": bool(torch.cuda.is_available()),
        "interpreter": os.environ.get("TRITON_INTERPRET") == "1",
    }
    if info["cuda"]:
        props = torch.cuda.get_device_properties(0)
        info.update({
            "name": props.name,
            "capability": f"{props.major}.{props.minor}",
            "sm_count": props.multi_processor_count,
            "memory_bytes": props.total_memory,
            "l2_bytes": getattr(props, "L2_cache_size", None),
            "cuda_runtime": torch.version.cuda,
        })
    else:
        info["name"] = "cpu (triton interpreter)"
    return info


def handle(job) -> dict:
    return device_info()
