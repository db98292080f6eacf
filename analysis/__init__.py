"""Static analysis of Triton kernels: tree-sitter → kernel model → rules. Pure: no pygls, torch or triton."""
