"""Run by the PlaCo cross-check in PlaCo's own environment (.venv-placo: PlaCo pins Pinocchio 3.8,
the main environment has 4.1): reads a problem as JSON on stdin, solves it with PlaCo's
DynamicsSolver and writes the actuated torques by joint name and the contact forces as JSON.

Input: urdf (its package://example-robot-data/ URIs resolved under package_root), q_base
[x y z qx qy qz qw] (Pinocchio's layout), joints {name: q}, contacts [frame names] (unilateral
point contacts, hard), planar_contacts [[frame, length, width]] (optional), mu, weights {com,
posture, torque, forces, regularization}, repeat (timed re-solves).
"""
import json
import sys
import time

import numpy as np
import placo


def main():
    p = json.load(sys.stdin)
    urdf = open(p["urdf"]).read().replace("package://example-robot-data/", p["package_root"] + "/")
    robot = placo.RobotWrapper(p["urdf"], placo.Flags.ignore_collisions, urdf)
    robot.state.q[:7] = p["q_base"]
    for name, value in p["joints"].items():
        robot.set_joint(name, value)
    robot.state.qd[:] = 0.0
    robot.update_kinematics()
    solver = placo.DynamicsSolver(robot)
    solver.problem.regularization = p["weights"]["regularization"]
    solver.torque_cost = p["weights"]["torque"]
    contacts = []
    for frame in p["contacts"]:
        task = solver.add_position_task(frame, robot.get_T_world_frame(frame)[:3, 3])
        task.configure(frame, "hard", 1.0)
        contacts.append(solver.add_unilateral_point_contact(task))
    for frame, length, width in p.get("planar_contacts", []):
        task = solver.add_frame_task(frame, robot.get_T_world_frame(frame))
        task.configure(frame, "hard", 1.0, 1.0)
        contact = solver.add_planar_contact(task)
        contact.length, contact.width = length, width
        contacts.append(contact)
    for contact in contacts:
        contact.mu = p["mu"]
        contact.weight_forces = p["weights"]["forces"]
    com = solver.add_com_task(robot.com_world())
    com.configure("com", "soft", p["weights"]["com"])
    posture = solver.add_joints_task()
    posture.set_joints({name: robot.get_joint(name) for name in p["joints"]})
    posture.configure("posture", "soft", p["weights"]["posture"])
    result = solver.solve()
    times = []
    for _ in range(p.get("repeat", 0)):
        t0 = time.perf_counter_ns()
        solver.solve()
        times.append((time.perf_counter_ns() - t0) / 1e3)
    json.dump({"success": bool(result.success),
               "tau": {name: float(result.tau[robot.get_joint_v_offset(name)]) for name in p["joints"]},
               "forces": [np.asarray(c.wrench).reshape(-1).tolist() for c in contacts],
               "times_us": times}, sys.stdout)


if __name__ == "__main__":
    main()
