"""tritonlens: find, measure and fix the bottlenecks of Triton GPU kernels."""

__version__ = "0.1.0"
