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
        import stompbox.core.jit as jit
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
        import stompbox.core.jit as jit
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
