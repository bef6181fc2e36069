# The simulator's point contact (drivers.sim._contact), declared for the stepper (drivers.sim._physics).

cdef class PointContact:

    cdef readonly int num_geometries, num_ground, num_pairs, max_contacts, num_bodies, num_velocities
    cdef readonly int num_contacts
    cdef readonly double ground_height, stiffness, dissipation, stiction_tolerance, time_step
    cdef int* g_shape
    cdef int* g_body
    cdef double* g_R
    cdef double* g_p
    cdef double* g_size
    cdef int* ground_g
    cdef double* ground_mu
    cdef int* pair_g
    cdef double* pair_mu
    cdef double* X_WG
    cdef dict _arrays                # the numpy arrays the pointers below point into, by name
    # Detected contacts of the current evaluation.
    cdef int* d_g
    cdef int* d_b
    cdef double* d_pa
    cdef double* d_pb
    cdef double* d_n
    cdef double* d_depth
    cdef double* d_mu
    cdef double* d_cap
    cdef double* d_f
    cdef double* d_C
    cdef double* d_vn
    cdef double* d_slip
    cdef double* d_A
    cdef double* d_u
    cdef double* d_J
    cdef double* d_Y
    cdef double* d_L
    cdef int* d_marked
    # Recorded contacts.
    cdef readonly object geometry_A, geometry_B, body_A, body_B
    cdef readonly object p_WCa, p_WCb, p_WC, nhat_BA_W, f_Bc_W, depth, separation_speed, slip_speed
    cdef int* r_gA
    cdef int* r_gB
    cdef int* r_bA
    cdef int* r_bB
    cdef double* r_pa
    cdef double* r_pb
    cdef double* r_pc
    cdef double* r_n
    cdef double* r_f
    cdef double* r_depth
    cdef double* r_vn
    cdef double* r_vt

    cdef void _geometry_poses(self, const double* X) noexcept nogil
    cdef void _add(self, int n, int gA, int gB, const double* pa, const double* pb, const double* nhat,
                          double depth, const double* mu) noexcept nogil
    cdef int detect(self, const double* X) noexcept nogil
    cdef int _pair(self, int n, int i) noexcept nogil
    cdef int _boxes(self, int n, int i) noexcept nogil
    cdef int mark_bodies(self, int n) noexcept nogil
    cdef int jacobians(self, int n, const double* X, const double* J, const double* M) noexcept nogil
    cdef void _delassus(self, int i, int j, double* W) noexcept nogil
    cdef void bound(self, int n) noexcept nogil
    cdef double _kinematics(self, int i, const double* X, const double* V, double* c, double* rA, double* rB,
                                   double* vt) noexcept nogil
    cdef void _push(self, int i, const double* rA, const double* rB, const double* f, double* F) noexcept nogil
    cdef void _record(self, int i, const double* c, const double* f, double vn, double slip) noexcept nogil
    cdef void apply(self, int n, const double* X, const double* V, double* F, bint record) noexcept nogil
    cdef int spring(self, int n, const double* X, const double* V, double* F) noexcept nogil
    cdef int damp(self, int n, const double* X, const double* v_star, double* dv, bint record) noexcept nogil
    cdef void damping_forces(self, int n, const double* X, const double* V, double* F) noexcept nogil
    cdef void generalized(self, int n, double* tau) noexcept nogil
