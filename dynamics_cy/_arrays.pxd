# Argument checks and C buffers for the compiled modules (dynamics_cy, drivers.sim._physics): the only
# Python-level work a real-time kernel call does is to check its numpy arguments here.
cdef double* f64(object a, Py_ssize_t n0, Py_ssize_t n1, bint writable, str name) except NULL
cdef double* f64_3d(object a, Py_ssize_t n0, Py_ssize_t n1, Py_ssize_t n2, str name) except NULL
cdef double* f64_flat(object a, Py_ssize_t n, str name) except NULL
cdef double* alloc_f64(Py_ssize_t n) except NULL
cdef int* alloc_i32(Py_ssize_t n) except NULL
cdef void copy_f64(double* dst, object src, Py_ssize_t n) except *
cdef double* new_f64(object src, Py_ssize_t n) except NULL
cdef int* new_i32(object src, Py_ssize_t n, str name) except NULL
cdef double* f64_data(object a) except NULL
cdef double* f64_or_null(object a, Py_ssize_t n0, Py_ssize_t n1, str name) except? NULL
cdef int* i32_data(object a) except NULL
cdef object owned_f64(object values, tuple shape)
cdef object owned_i32(object values, tuple shape)
