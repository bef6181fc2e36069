// Pinocchio's crba (local convention) timed in a C++ loop, as a small C library that
// benchmarks/bench_mass_matrix.py compiles at benchmark time from Pinocchio's installed headers and
// loads with ctypes, so that its batches alternate with dynamics_cy's in one process.
//
// The model is the one Pinocchio's Python bindings build, saved with model.saveToText.
#include <time.h>

#include <cstdio>
#include <exception>

#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/serialization.hpp"

#define API extern "C" __attribute__((visibility("default")))

namespace {
struct Bench {
  pinocchio::Model model;
  pinocchio::Data data;
};
}  // namespace

// The model saved at `path`, or NULL with the reason in error[0:size].
API void* pin_crba_load(const char* path, char* error, int size) {
  try {
    auto* b = new Bench();
    b->model.loadFromText(path);
    b->data = pinocchio::Data(b->model);
    return b;
  } catch (const std::exception& e) {
    std::snprintf(error, size, "%s", e.what());
    return nullptr;
  }
}

API void pin_crba_free(void* b) { delete static_cast<Bench*>(b); }

API int pin_crba_nq(void* b) { return static_cast<Bench*>(b)->model.nq; }

API int pin_crba_nv(void* b) { return static_cast<Bench*>(b)->model.nv; }

static double thread_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// The mean ns per call, in the thread's CPU time, of `calls` calls of crba alternating q0 and q1 (nq each).
API double pin_crba_batch(void* h, const double* q0, const double* q1, long calls) {
  auto* b = static_cast<Bench*>(h);
  const Eigen::Map<const Eigen::VectorXd> q[2] = {{q0, b->model.nq}, {q1, b->model.nq}};
  const double t0 = thread_ns();
  for (long i = 0; i < calls; ++i) pinocchio::crba(b->model, b->data, q[i & 1]);
  return (thread_ns() - t0) / calls;
}

// M (nv x nv, row-major) = crba at q: the upper triangle Pinocchio computes, the rest zero.
API void pin_crba_matrix(void* h, const double* q, double* M) {
  auto* b = static_cast<Bench*>(h);
  pinocchio::crba(b->model, b->data, Eigen::Map<const Eigen::VectorXd>(q, b->model.nq));
  const int nv = b->model.nv;
  for (int r = 0; r < nv; ++r)
    for (int c = 0; c < nv; ++c) M[r * nv + c] = c >= r ? b->data.M(r, c) : 0.0;
}
