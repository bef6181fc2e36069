# The simulator's holonomic constraints (drivers.sim._constraints), declared for the stepper (drivers.sim._physics).

cdef class Constraints:

    cdef readonly int num_constraints, max_rows, num_rows, nv, nb
    cdef readonly double time_step
    cdef object _body_poses, _jacobian, _frames, _jacobian_rows, _bodies
    cdef dict _arrays                # the numpy arrays the pointers below point into, by name
    cdef int* kind                   # per constraint: COUPLER, DISTANCE, BALL, WELD
    cdef int* ints                   # per constraint, 4: body A, body B (or q0, q1, v0, v1 for a coupler)
    cdef double* reals               # per constraint, 24: its parameters (see Constraints.__init__)
    cdef double* c_active            # per constraint: 1 active, 0 not
    cdef double* X_WB                # body poses (nb, 4, 4)
    cdef double* J_WB                # body Jacobians (nb, 6, nv), of the constrained bodies
    cdef double* G                   # constraint Jacobian (max_rows, nv)
    cdef double* Y                   # A⁻¹ Gᵀ, stored as rows (max_rows, nv)
    cdef double* W                   # G A⁻¹ Gᵀ + R, then its factor (max_rows, max_rows)
    cdef double* g                   # constraint function (max_rows)
    cdef double* k_eq                # per row: stiffness (inf: rigid) and relaxation time τ = c / k
    cdef double* tau_eq
    cdef double* c_gamma             # impulses γ (max_rows)
    cdef double* c_generalized       # Gᵀ γ / h (nv)

    cdef int _rows(self, object q, const double* cq) except -1
    cdef void _point(self, int b, const double* r, const double* U, int n, double sign, double* out) noexcept
    cdef void _angular(self, int b, double sign, double* out) noexcept
    cdef int project(self, object q, const double* q_data, const double* factor, const double* A, double* v) except -1
