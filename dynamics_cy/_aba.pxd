from dynamics_cy._model cimport Data, Model

cdef int aba(Model m, Data d, const double* tau, bint use_gravity, bint use_fext, double* vdot) noexcept nogil
