from dynamics_cy._model cimport Data, Model

cdef void world_subspaces(Model m, Data d) noexcept nogil
cdef void crba(Model m, Data d, double* M) noexcept nogil
