# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""dynamics_cy's mass matrix timed in a compiled loop: crba_q, the GIL-free C function that
``Kernels.mass_matrix`` calls, with no Python per call. benchmarks/bench_mass_matrix.py compiles it
at benchmark time against the dynamics_cy it imports (its .pxd files)."""
from dynamics_cy._crba cimport crba_q
from dynamics_cy._model cimport Data, Model
from posix.time cimport CLOCK_THREAD_CPUTIME_ID, clock_gettime, timespec


cdef double _ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return ts.tv_sec * 1e9 + ts.tv_nsec


def batch(Model model not None, Data data not None, const double[::1] q0, const double[::1] q1,
          double[:, ::1] M, long calls):
    """The mean ns per call, in the thread's CPU time, of `calls` calls of crba_q alternating q0 and q1
    (M(q1) in M at the end)."""
    if q0.shape[0] != model.nq or q1.shape[0] != model.nq or M.shape[0] != model.nv or M.shape[1] != model.nv:
        raise ValueError(f"q0 and q1 must have {model.nq} entries and M shape ({model.nv}, {model.nv})")
    cdef const double* q[2]
    cdef double* Mp = &M[0, 0]
    cdef long i
    cdef double t0
    q[0], q[1] = &q0[0], &q1[0]
    with nogil:
        t0 = _ns()
        for i in range(calls):
            crba_q(model, data, q[i & 1], Mp)
        t0 = _ns() - t0
    return t0 / calls
