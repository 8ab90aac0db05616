"""Calls between compiled kernels through their addresses, not by linking (issue #25).

numba compiles a jitted function that calls another by linking the callee's code into the
caller's module and optimizing and emitting the whole module again: a kernel at the top of
a deep call tree re-optimizes every function below it, once per level (the permutation
calibration's tree cost three quarters of a fresh process's first ``iamb``). A
:class:`Callee` is called instead through its compiled address, passed in at run time (an
int64), with numba's own calling convention (the jitted entry point: its exceptions
propagate, its arrays are reference-counted as in a linked call): each kernel is compiled
and optimized once, alone, and the callers' cached code holds no address (the addresses
are looked up in each process, from the callees' own cache entries).
"""
from __future__ import annotations

import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

__all__ = ["Callee", "addresses"]


def _function_of(signature):
    """An intrinsic ``f = as_function(address)`` of the first-class function type of
    ``signature``, called through its jitted entry point (no C wrapper)."""
    function_type = types.FunctionType(signature)

    @intrinsic
    def as_function(typingctx, address):  # pragma: no cover - compiled
        def codegen(context, builder, sig, args):
            value = cgutils.create_struct_proxy(function_type)(context, builder)
            null = cgutils.voidptr_t(None)
            value.c_addr = null
            value.py_addr = null
            value.jit_addr = builder.inttoptr(args[0], cgutils.voidptr_t)
            return value._getvalue()

        return function_type(types.int64), codegen

    return as_function


class Callee:
    """A jitted kernel called by others through its address.

    Parameters
    ----------
    dispatcher : numba dispatcher
        The kernel.
    signature : numba Signature
        The one version the callers call: its argument types (the callers' values are cast
        to them, a C-contiguous array to an "A" layout, say) and its return type.

    ``call`` is the intrinsic that turns the address (int64) into a callable inside a
    jitted caller: ``Kernel.call(addrs[slot])(args...)``.
    """

    def __init__(self, dispatcher, signature):
        self.dispatcher = dispatcher
        self.signature = signature
        self.call = _function_of(signature)
        self._address = 0

    def address(self) -> int:
        """The address of the kernel's jitted entry point for :attr:`signature` (compiled,
        or loaded from the cache, on the first call in a process)."""
        if not self._address:
            result = self.dispatcher.get_compile_result(self.signature)
            if result.signature.return_type != self.signature.return_type:
                raise TypeError(f"{self.dispatcher.py_func.__name__} returns "
                                f"{result.signature.return_type}, not "
                                f"{self.signature.return_type}")
            self._address = result.library.get_pointer_to_function(
                result.fndesc.llvm_func_name)
        return self._address


def addresses(callees) -> np.ndarray:
    """The int64 addresses of ``callees``, in order (the table the kernels pass down)."""
    return np.array([c.address() for c in callees], dtype=np.int64)
