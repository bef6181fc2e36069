from dynamics_cy._model cimport Data, Model

cdef void world_acceleration(Model m, Data d, bint use_gravity) noexcept nogil
cdef void load_body_forces(Model m, Data d, const double* F_W) noexcept nogil
cdef void rnea(Model m, Data d, const double* vdot, bint use_velocity, bint use_gravity, bint use_fext,
               double* tau) noexcept nogil
cdef void gravity(Model m, Data d, double* tau) noexcept nogil
