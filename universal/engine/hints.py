"""A cache hint for the compiled kernels: ``prefetch(array, row)`` asks the processor to fetch
``array[row]`` into its caches ahead of its use (LLVM's ``prefetch`` intrinsic, through numba),
so that the random reads of a step loop overlap instead of waiting one after the other.

In plain Python (without numba, or a kernel's ``py_func``) it does nothing. Importing this module
imports numba when it is installed.
"""

from __future__ import annotations

try:
    import numba  # noqa: F401
    NUMBA = True
except ImportError:
    NUMBA = False

__all__ = ["prefetch"]


def prefetch(array, row) -> None:
    """Ask the processor to fetch ``array[row]`` (the row's first element) into its caches: a
    hint, nothing else happens (in plain Python, nothing at all)."""


if NUMBA:
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic, overload

    # LLVM names the intrinsic by its pointer type: `ptr` (opaque pointers) or `i8*`
    _PREFETCH = "llvm.prefetch.p0" if str(ir.IntType(8).as_pointer()) == "ptr" else "llvm.prefetch.p0i8"

    @intrinsic
    def _prefetch_hint(typingctx, array, row):
        """LLVM's ``prefetch`` of ``array[row, 0...]``, for a read, kept in all caches."""
        def codegen(context, builder, signature, args):
            kind = signature.args[0]
            data = context.make_array(kind)(context, builder, args[0])
            row = context.cast(builder, args[1], signature.args[1], types.intp)   # any integer type
            index = [row] + [context.get_constant(types.intp, 0)] * (kind.ndim - 1)
            pointer = cgutils.get_item_pointer(context, builder, kind, data, index, wraparound=False)
            byte = builder.bitcast(pointer, ir.IntType(8).as_pointer())
            word = ir.IntType(32)
            hint = cgutils.get_or_insert_function(builder.module, ir.FunctionType(
                ir.VoidType(), [byte.type, word, word, word]), _PREFETCH)
            builder.call(hint, [byte, word(0), word(3), word(1)])
            return context.get_dummy_value()
        return types.void(array, row), codegen

    @overload(prefetch)
    def _prefetch_compiled(array, row):
        return lambda array, row: _prefetch_hint(array, row)
