from dynamics_cy._model cimport Data, Model

cdef void reaction_forces(Model m, Data d, const double* F_W, double* out) noexcept nogil
