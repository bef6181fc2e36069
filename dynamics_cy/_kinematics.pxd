from dynamics_cy._model cimport Data, Model

cdef void positions(Model m, Data d, const double* q) noexcept nogil
cdef void positions_to(Model m, Data d, int n, const double* q) noexcept nogil
cdef void velocities(Model m, Data d, const double* q, const double* v) noexcept nogil
cdef int velocity_to_qdot(Model m, const double* q, const double* v, double* qdot) noexcept nogil
cdef void qdot_to_velocity_map(Model m, const double* q, double* Np) noexcept nogil
cdef void body_pose(Model m, Data d, int b, double* R, double* p) noexcept nogil
cdef void body_velocity(Model m, Data d, int b, double* V_W) noexcept nogil
cdef void frame_pose(Model m, Data d, int f, double* X) noexcept nogil
