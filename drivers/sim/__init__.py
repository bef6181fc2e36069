"""The simulated plant: a stand-in for the robot and its driver that speaks the robot's LCM protocol.

It owns the simulated robot: its physics (the fixed-step integrator in _physics.pyx, point contact in
_contact.pyx with the shapes' geometry in _shapes.pxd, all on dynamics_cy's kernels and compiled
helpers), the simulated drivers' firmware and LCM protocol, fault injection and the real-time runner.

    from drivers.sim import SimulatedRobot, SimConfig, load_sim_config
    robot = SimulatedRobot(plant, load_sim_config({"integrator": "rk4"}), "iiwa", channels, lc)

- config      SimConfig (the run config's `sim:` section), load_sim_config
- physics     Physics: fixed-step semi-implicit Euler / RK4 on dynamics_cy, damping, limits, effort clamp,
              pushes (external wrenches on a body, in the robot's external torque); make_physics picks
              the engine (sim.engine)
- mujoco_model, mujoco_physics  MujocoPhysics: MuJoCo as the plant (sim.engine: mujoco), its model
              generated from the plant
- contact     ContactModel: point contact (Hunt–Crossley, regularized Coulomb) → Drake's ContactResults
- contact_lcm ContactResultsPublisher: lcmt_contact_results_for_viz as Drake publishes it
- faults      FaultInjector: latency, drops, duplicates, frozen or noisy sensors, dead joints, silence,
              malformed commands
- robot       SimulatedRobot: the LCM-speaking robot, lockstep or real time
- commanders  CommanderWatch: who sends the commands on udpm://; a second commander refused
- pacing      run_paced: steps paced to the wall clock (the robot's and the station's)
- realtime    run_sim / run_from_config: `hil sim CONFIG`
See docs/sim.md.
"""
from .config import SimConfig, load_sim_config
from .contact import ContactModel
from .physics import Physics
from .realtime import run_from_config, run_sim
from .robot import SimulatedRobot

__all__ = ["ContactModel", "Physics", "SimConfig", "SimulatedRobot", "load_sim_config", "run_from_config", "run_sim"]
