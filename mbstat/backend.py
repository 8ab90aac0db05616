"""Where the counting runs: numpy on the CPU, or CuPy on a CUDA device.

Detection is done once and cached. ``"auto"`` uses the GPU when one answers
and the data has at least :data:`AUTO_GPU_MIN_ROWS` rows (below that a launch
costs more than the counting it saves), and quietly falls back to the CPU
otherwise; ``"gpu"`` without a device raises.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ._validation import check_choice

__all__ = ["Backend", "gpu_available", "resolve_backend", "set_backend", "get_backend"]

BACKENDS = ("auto", "cpu", "gpu")
#: ``"auto"`` counts on the GPU from this many rows (measured: ``benchmarks/gpu.py``).
AUTO_GPU_MIN_ROWS = 500_000
_default = "auto"


@dataclass(frozen=True)
class Backend:
    """A resolved backend: its name, array module and the device it runs on."""

    name: str  # "numpy" or "cupy"
    device: str  # "cpu" or "cuda:<id> (<gpu name>)"
    xp: object

    @property
    def is_gpu(self) -> bool:
        return self.name == "cupy"

    def __str__(self) -> str:
        return f"{self.name} ({self.device})"


CPU = Backend("numpy", "cpu", np)


@lru_cache(maxsize=1)
def _cupy_backend():
    """The CuPy backend if CuPy imports and a CUDA device answers, else None."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return None
        dev = cupy.cuda.Device()
        props = cupy.cuda.runtime.getDeviceProperties(dev.id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        cupy.zeros(1).sum()  # the device really answers
        return Backend("cupy", f"cuda:{dev.id} ({name})", cupy)
    except Exception:  # ImportError, CUDA driver/runtime errors
        return None


def gpu_available() -> bool:
    """True when CuPy imports and a CUDA device answers."""
    return _cupy_backend() is not None


def set_backend(backend: str) -> None:
    """Set the package-wide default backend: "auto", "cpu" or "gpu"."""
    global _default
    check_choice("backend", backend, BACKENDS)
    if backend == "gpu":
        resolve_backend("gpu")
    _default = backend


def get_backend() -> str:
    """The package-wide default backend name."""
    return _default


def resolve_backend(backend: str | None = None, n_rows: int | None = None) -> Backend:
    """Turn "auto" / "cpu" / "gpu" (None: the global default) into a Backend.

    ``n_rows``: rows of the data to be counted; "auto" keeps data smaller than
    :data:`AUTO_GPU_MIN_ROWS` on the CPU.
    """
    backend = _default if backend is None else backend
    check_choice("backend", backend, BACKENDS)
    if backend == "cpu" or (backend == "auto" and n_rows is not None
                            and n_rows < AUTO_GPU_MIN_ROWS):
        return CPU
    gpu = _cupy_backend()
    if gpu is None:
        if backend == "gpu":
            raise RuntimeError(
                "backend='gpu' needs CuPy and a CUDA device, and none answered; "
                "install the 'gpu' extra (pip install 'mbstat[gpu]') on a machine "
                "with an NVIDIA GPU, or use backend='auto' or 'cpu'"
            )
        return CPU
    return gpu
