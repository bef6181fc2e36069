// Pinocchio's crba (local convention) timed in a C++ loop; compiled from Pinocchio's installed headers
// by benchmarks/bench_mass_matrix.py, which runs it.
//
//   pinocchio_crba MODEL CALLS BATCHES < states
//
// MODEL: the model as Pinocchio's Python bindings save it (model.saveToText), so that both time one model.
//
// stdin: nq, then two configurations of nq numbers each (Pinocchio's layout). Prints "nv N", one line
// "batch NS" per batch (the mean ns per call over CALLS calls alternating the two states), then "M" and
// the upper triangle of M at the first state, row-major, as Pinocchio's crba computes it.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "pinocchio/algorithm/crba.hpp"
#include "pinocchio/serialization.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s MODEL CALLS BATCHES < states\n", argv[0]);
    return 2;
  }
  pinocchio::Model model;
  model.loadFromText(argv[1]);
  pinocchio::Data data(model);
  const long calls = std::atol(argv[2]), batches = std::atol(argv[3]);
  int nq = 0;
  std::cin >> nq;
  if (nq != model.nq) {
    std::fprintf(stderr, "states have nq = %d, the model %d\n", nq, model.nq);
    return 2;
  }
  Eigen::VectorXd q[2] = {Eigen::VectorXd(nq), Eigen::VectorXd(nq)};
  for (auto& qi : q)
    for (int i = 0; i < nq; ++i) std::cin >> qi[i];
  if (!std::cin) {
    std::fprintf(stderr, "cannot read two states of %d numbers from stdin\n", nq);
    return 2;
  }
  std::printf("nv %d\n", model.nv);
  for (long i = 0; i < calls / 10; ++i) pinocchio::crba(model, data, q[i & 1]);   // warm-up
  for (long b = 0; b < batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) pinocchio::crba(model, data, q[i & 1]);
    const auto t1 = std::chrono::steady_clock::now();
    std::printf("batch %.3f\n", std::chrono::duration<double, std::nano>(t1 - t0).count() / calls);
  }
  pinocchio::crba(model, data, q[0]);
  std::printf("M\n");
  for (int r = 0; r < model.nv; ++r)
    for (int c = r; c < model.nv; ++c) std::printf("%.17g\n", data.M(r, c));
  return 0;
}
