"""Worker folder: standalone modules shipped as plain files to any interpreter (see README.md).

Importing this package is only for the client side (tritonlens.profiling.worker.supervisor);
the worker itself runs worker_main.py as a script, with this folder on sys.path.
"""
