# The simulator's force elements (drivers.sim._forces), declared for the stepper (drivers.sim._physics).

cdef class ForceElements:

    cdef readonly int num_joint, num_springs, num_bushings, num_bodies, nq, nv
    cdef readonly bint acts_on_bodies          # spring-dampers or bushings: body forces from the poses
    cdef dict _arrays                           # the numpy arrays the pointers below point into, by name
    cdef int* j_idx                             # per joint element: its q and v index
    cdef double* j_par                          # [kind, 8 parameters]
    cdef int* s_idx                             # per spring-damper: bodies A, B
    cdef double* s_par                          # [p_AP, p_BQ, ℓ₀, k, c]
    cdef int* b_idx                             # per bushing: links L0, L1
    cdef double* b_par                          # [R_L0A, p_L0A, R_L1C, p_L1C, k₀₁₂, d₀₁₂, kxyz, dxyz]
    cdef object _body_poses, _body_velocities, _body_forces, _id_free, _id_loaded, _zero_v
    cdef object _calc_body_poses, _calc_body_velocities, _inverse_dynamics

    cdef void joint_torques(self, const double* q, const double* v, double* tau) noexcept nogil
    cdef int body_forces(self, const double* X, const double* V, double* F) noexcept nogil
    cdef int _bushing(self, int i, const double* X, const double* V, double* F) noexcept nogil
    cdef int check(self, int status) except -1
