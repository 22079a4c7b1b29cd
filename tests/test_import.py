"""``import stompbox`` stays light, and the Numba guard survives unwritable caches."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


def test_import_does_not_load_heavy_modules():
    result = run(
        """
        import sys, stompbox
        heavy = [m for m in ("numba", "scipy", "av", "soundfile", "matplotlib", "soxr") if m in sys.modules]
        print(",".join(heavy))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ""


def test_all_public_names_resolve():
    result = run(
        """
        import stompbox
        missing = []
        for name in stompbox.__all__:
            try:
                getattr(stompbox, name)
            except (AttributeError, ImportError) as exc:
                missing.append(f"{name}: {exc}")
        print("|".join(missing))
        """
    )
    assert result.returncode == 0, result.stderr
    print(result.stdout)


def test_kernels_compile_when_no_cache_location_is_writable():
    # Root can write anywhere, so make the guard believe the package folder and ~/.cache are read-only and
    # point NUMBA_CACHE_DIR somewhere that really is unwritable (/proc): it must fall back to a temp folder.
    result = run(
        """
        import os, tempfile
        import stompbox._base.jit as jit
        real = jit._writable
        jit._writable = lambda p: str(p).startswith(tempfile.gettempdir()) and real(p)
        import numpy as np

        @jit.kernel
        def twice(x):
            for i in range(x.shape[0]):
                x[i] *= 2.0
            return x

        print(twice(np.ones(3))[0], os.environ["NUMBA_CACHE_DIR"].startswith(tempfile.gettempdir()))
        """,
        NUMBA_CACHE_DIR="/proc/stompbox-cache",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2.0", "True"]


def test_kernels_compile_without_any_cache():
    result = run(
        """
        import stompbox._base.jit as jit
        jit._writable = lambda p: False
        import numpy as np

        @jit.kernel
        def twice(x):
            return x * 2.0

        print(twice(np.ones(3))[1])
        """,
        NUMBA_CACHE_DIR="/proc/stompbox-cache",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2.0"


def test_first_process_loads_cached_kernels_without_numba_target_set_up():
    """Numba's memory manager starts when an effect class is imported (it compiles a few functions, ~25 ms), so
    the first process() only loads its own cached kernels; with a warm cache the process never sets up Numba's
    whole compilation target (importing its implementation registry, ~0.1 s: see test_jit_fast_load.py), and the
    BLAS probe never imports scipy.linalg."""
    code = """
        import sys
        import numpy as np
        import stompbox
        from numba.core.runtime import rtsys
        board = stompbox.Pedalboard([stompbox.Compressor(), stompbox.LowpassFilter()])
        started = rtsys._init
        out = board(np.zeros((2, 64), np.float32), 44100)
        registry = "numba.np.polynomial.polynomial_core" in sys.modules
        print(started, out.shape == (2, 64), registry, "scipy.linalg" in sys.modules)
        """
    run(code)  # compiles the two kernels if this checkout has not yet
    result = run(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "False", "False"]


def test_numba_blas_still_works_for_user_code_after_the_deferred_probe():
    result = run(
        """
        import sys
        import numpy as np
        import stompbox
        stompbox.Compressor  # loads the Numba target with the BLAS probe deferred
        import numba
        import numba.np.arraymath as arraymath
        have_scipy = __import__("importlib.util").util.find_spec("scipy") is not None
        assert arraymath._HAVE_BLAS == have_scipy
        @numba.njit
        def f(a, b):
            return np.correlate(a, b)[0]
        print(f(np.arange(4.0), np.ones(4)))
        """
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "6.0"


def test_numba_blas_probe_answers_false_without_scipy():
    result = run(
        """
        import sys
        class NoScipy:
            def find_spec(self, name, path, target=None):
                if name == "scipy" or name.startswith("scipy."):
                    raise ImportError("no scipy here")
        sys.meta_path.insert(0, NoScipy())
        import importlib.util
        importlib.util.find_spec = (lambda real: lambda name, *a: None if name == "scipy" else real(name, *a))(
            importlib.util.find_spec
        )
        import numpy as np
        import stompbox
        out = stompbox.Compressor()(np.ones((1, 32), np.float32), 44100)
        import numba.np.arraymath as arraymath
        print(arraymath._HAVE_BLAS, out.shape)
        """
    )
    if "numba" in result.stderr and "scipy" in result.stderr:  # this Numba needs SciPy to import at all
        import pytest

        pytest.skip("numba itself imports scipy here")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "(1,", "32)"]
