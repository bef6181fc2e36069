"""The `hil` command line."""
from __future__ import annotations

import argparse
import sys

import numpy as np

from .paths import DEFAULT_ROBOT


def _summary(model: str) -> int:
    from dynamics_cy import MultibodyPlant, Parser
    plant = MultibodyPlant(0.0)
    Parser(plant).AddModels(model)
    plant.Finalize()
    context = plant.CreateDefaultContext()
    k = plant.kernels()
    q = np.zeros(plant.num_positions())
    tau_g = np.zeros(plant.num_velocities())
    M = np.zeros((plant.num_velocities(),) * 2)
    k.gravity(q, tau_g)
    k.mass_matrix(q, M)
    print(f"model: {model}")
    print(f"  bodies {plant.num_bodies()}  joints {plant.num_joints()}  nq {plant.num_positions()}  "
          f"nv {plant.num_velocities()}  actuators {plant.num_actuators()}")
    print(f"  total mass {plant.CalcTotalMass(context):.3f} kg, "
          f"com at q=0: {np.round(plant.CalcCenterOfMassPositionInWorld(context), 4)}")
    print(f"  gravity compensation at q=0 [N m]: {np.round(-tau_g, 3)}")
    print(f"  mass matrix diagonal at q=0: {np.round(np.diag(M), 4)}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hil", description="Hardware-in-the-loop robot control stack.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="summarize the dynamics of the default robot")
    demo.add_argument("--model", default=str(DEFAULT_ROBOT), help="URDF or SDF file (default: the iiwa14)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return _summary(args.model)
    return 2


if __name__ == "__main__":
    sys.exit(main())
