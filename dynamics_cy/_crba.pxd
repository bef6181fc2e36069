from dynamics_cy._model cimport Data, Model

cdef void world_subspaces(Model m, Data d) noexcept nogil
cdef void crba(Model m, Data d, double* M) noexcept nogil
cdef void crba_q(Model m, Data d, const double* q, double* M) noexcept nogil
