# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Argument checks (C-contiguous, aligned float64 numpy arrays of a given shape, named in the error)
and zeroed C buffers, written once for every compiled module (declared in _arrays.pxd)."""
cimport numpy as cnp

from libc.stdlib cimport malloc
from libc.string cimport memcpy, memset

import numpy as np

cnp.import_array()


cdef cnp.ndarray _float64(object a, str name):
    if not cnp.PyArray_Check(a):
        raise ValueError(f"{name} must be a numpy float64 array, got {type(a).__name__}")
    if cnp.PyArray_TYPE(<cnp.ndarray>a) != cnp.NPY_DOUBLE:
        raise ValueError(f"{name} must have dtype float64, got {a.dtype}")
    return <cnp.ndarray>a


cdef double* f64(object a, Py_ssize_t n0, Py_ssize_t n1, bint writable, str name) except NULL:
    """The data pointer of a C-contiguous float64 array of shape (n0,) when n1 < 0, else (n0, n1)."""
    cdef cnp.ndarray arr = _float64(a, name)
    cdef int nd = 1 if n1 < 0 else 2
    if cnp.PyArray_NDIM(arr) != nd or cnp.PyArray_DIM(arr, 0) != n0 or (nd == 2 and cnp.PyArray_DIM(arr, 1) != n1):
        want = f"({n0},)" if nd == 1 else f"({n0}, {n1})"
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(arr) or not cnp.PyArray_ISALIGNED(arr):
        raise ValueError(f"{name} must be C-contiguous and aligned")
    if writable and not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"{name} must be writable")
    return <double*>cnp.PyArray_DATA(arr)


cdef double* f64_3d(object a, Py_ssize_t n0, Py_ssize_t n1, Py_ssize_t n2, str name) except NULL:
    """The data pointer of a writable C-contiguous float64 array of shape (n0, n1, n2)."""
    cdef cnp.ndarray arr = _float64(a, name)
    if cnp.PyArray_NDIM(arr) != 3 or cnp.PyArray_DIM(arr, 0) != n0 or cnp.PyArray_DIM(arr, 1) != n1 \
            or cnp.PyArray_DIM(arr, 2) != n2:
        raise ValueError(f"{name} must have shape ({n0}, {n1}, {n2}), got {a.shape}")
    if not cnp.PyArray_IS_C_CONTIGUOUS(arr) or not cnp.PyArray_ISALIGNED(arr) or not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"{name} must be writable, C-contiguous and aligned")
    return <double*>cnp.PyArray_DATA(arr)


cdef double* f64_flat(object a, Py_ssize_t n, str name) except NULL:
    """The data pointer of a writable C-contiguous float64 array holding n values (any shape)."""
    cdef cnp.ndarray arr = _float64(a, name)
    if cnp.PyArray_SIZE(arr) != n or not cnp.PyArray_IS_C_CONTIGUOUS(arr) or not cnp.PyArray_ISWRITEABLE(arr):
        raise ValueError(f"{name} must be a writable C-contiguous float64 array of {n} values, "
                         f"got {a.dtype} {a.shape}")
    return <double*>cnp.PyArray_DATA(arr)


cdef void* _owned_data(object a, int typenum, str what) except NULL:
    if not cnp.PyArray_Check(a) or cnp.PyArray_TYPE(<cnp.ndarray>a) != typenum \
            or not cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a):
        raise ValueError(f"expected a C-contiguous {what} array")
    return cnp.PyArray_DATA(<cnp.ndarray>a)


cdef double* f64_data(object a) except NULL:
    """The data pointer of a C-contiguous float64 array the caller owns (any shape)."""
    return <double*>_owned_data(a, cnp.NPY_DOUBLE, "float64")


cdef int* i32_data(object a) except NULL:
    """The data pointer of a C-contiguous int32 array the caller owns (any shape)."""
    return <int*>_owned_data(a, cnp.NPY_INT32, "int32")


cdef double* f64_or_null(object a, Py_ssize_t n0, Py_ssize_t n1, str name) except? NULL:
    """NULL for None, else f64(a, n0, n1, False, name): an optional input such as body forces."""
    if a is None:
        return NULL
    return f64(a, n0, n1, False, name)


cdef object owned_f64(object values, tuple shape):
    """A new C-contiguous float64 array of the given shape holding values (for f64_data)."""
    return np.ascontiguousarray(np.array(values, dtype=np.float64).reshape(shape))


cdef object owned_i32(object values, tuple shape):
    """A new C-contiguous int32 array of the given shape holding values (for i32_data)."""
    return np.ascontiguousarray(np.array(values, dtype=np.int32).reshape(shape))


cdef void* _zeroed(Py_ssize_t n, size_t size) except NULL:
    cdef size_t bytes = (n if n > 0 else 1) * size
    cdef void* p = malloc(bytes)
    if p == NULL:
        raise MemoryError()
    memset(p, 0, bytes)
    return p


cdef double* alloc_f64(Py_ssize_t n) except NULL:
    """A zeroed C array of n doubles (at least one), freed by the caller."""
    return <double*>_zeroed(n, sizeof(double))


cdef int* alloc_i32(Py_ssize_t n) except NULL:
    """A zeroed C array of n ints (at least one), freed by the caller."""
    return <int*>_zeroed(n, sizeof(int))


cdef void copy_f64(double* dst, object src, Py_ssize_t n) except *:
    """dst[:n] = the n values of the array-like src."""
    cdef cnp.ndarray a = cnp.PyArray_FROMANY(src, cnp.NPY_DOUBLE, 0, 0, cnp.NPY_ARRAY_C_CONTIGUOUS)
    if cnp.PyArray_SIZE(a) != n:
        raise ValueError(f"expected {n} values, got {cnp.PyArray_SIZE(a)}")
    memcpy(dst, cnp.PyArray_DATA(a), n * sizeof(double))


cdef double* new_f64(object src, Py_ssize_t n) except NULL:
    """A new C array holding the n values of the array-like src."""
    cdef double* p = alloc_f64(n)
    copy_f64(p, src, n)
    return p


cdef int* new_i32(object src, Py_ssize_t n, str name) except NULL:
    """A new C array holding the n integers of the sequence src."""
    if len(src) != n:
        raise ValueError(f"{name}: expected {n} integers, got {len(src)}")
    cdef int* p = alloc_i32(n)
    cdef Py_ssize_t k
    for k in range(n):
        p[k] = int(src[k])
    return p
