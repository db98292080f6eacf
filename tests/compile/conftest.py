import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _private_compile_cache(tmp_path_factory):
    """Every run starts cold: compile answers go to a fresh folder, never the user's cache."""
    old = os.environ.get("TRITONLENS_COMPILE_CACHE")
    os.environ["TRITONLENS_COMPILE_CACHE"] = str(tmp_path_factory.mktemp("compile-cache"))
    yield
    if old is None:
        os.environ.pop("TRITONLENS_COMPILE_CACHE", None)
    else:
        os.environ["TRITONLENS_COMPILE_CACHE"] = old
    from tritonlens.profiling import compile_job

    compile_job.shutdown()


# A module that names its kernels file in FIXTURE gets it compiled for sm_90 once (`report`) and its
# static configurations (`configs`).
@pytest.fixture(scope="module")
def report(request):
    from tritonlens.profiling.compile_job import compile_file

    return compile_file(request.module.FIXTURE, target="sm_90")


@pytest.fixture(scope="module")
def configs(request):
    from tritonlens.profiling.static_configs import static_configs_of_text

    return static_configs_of_text(request.module.FIXTURE.read_text())[0]
