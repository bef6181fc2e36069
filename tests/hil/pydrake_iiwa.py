"""Drake's own simulated iiwa as a robot on LCM, an independent implementation of the protocol:
pydrake's IiwaCommandReceiver → SimIiwaDriver → MultibodyPlant → IiwaStatusSender, wired as
BuildIiwaControl does but with the status published every STATUS_PERIOD (BuildIiwaControl keeps
Drake's 5 ms), paced to the wall clock.

    python tests/hil/pydrake_iiwa.py URL MODE STATUS_PERIOD DURATION Q0...

MODE: position_only, torque_only or position_and_torque. Prints "ready" once simulating, and at the
end one JSON line: the final q and the largest |v| seen per joint.
"""
import json
import sys
from pathlib import Path

import numpy as np
from drake import lcmt_iiwa_command, lcmt_iiwa_status
from pydrake.lcm import DrakeLcm
from pydrake.manipulation import IiwaCommandReceiver, IiwaDriver, IiwaStatusSender, ParseIiwaControlMode, SimIiwaDriver
from pydrake.multibody.parsing import Parser
from pydrake.multibody.plant import AddMultibodyPlantSceneGraph
from pydrake.systems.analysis import Simulator
from pydrake.systems.framework import DiagramBuilder
from pydrake.systems.lcm import LcmInterfaceSystem, LcmPublisherSystem, LcmSubscriberSystem

URDF = Path(__file__).resolve().parents[2] / "configs" / "robots" / "iiwa14.urdf"


def main(url: str, mode: str, status_period: float, duration: float, q0: list[float]) -> None:
    builder = DiagramBuilder()
    plant, _ = AddMultibodyPlantSceneGraph(builder, time_step=0.001)
    iiwa = Parser(plant).AddModels(str(URDF))[0]
    plant.Finalize()
    controller_plant_builder = DiagramBuilder()
    controller_plant, _ = AddMultibodyPlantSceneGraph(controller_plant_builder, time_step=0.001)
    Parser(controller_plant).AddModels(str(URDF))
    controller_plant.Finalize()
    lcm = DrakeLcm(url)
    builder.AddSystem(LcmInterfaceSystem(lcm))
    config = IiwaDriver()
    config.control_mode = mode
    driver = SimIiwaDriver.AddToBuilder(builder, plant, iiwa, config, controller_plant)
    control_mode = ParseIiwaControlMode(mode)
    subscriber = builder.AddSystem(LcmSubscriberSystem.Make("IIWA_COMMAND", lcmt_iiwa_command, lcm,
                                                                 use_cpp_serializer=True))
    receiver = builder.AddSystem(IiwaCommandReceiver(7, control_mode))
    builder.Connect(subscriber.get_output_port(), receiver.GetInputPort("lcmt_iiwa_command"))
    builder.Connect(driver.GetOutputPort("position_measured"), receiver.GetInputPort("position_measured"))
    for port in ("position", "torque"):
        if driver.HasInputPort(port):
            builder.Connect(receiver.GetOutputPort(port), driver.GetInputPort(port))
    sender = builder.AddSystem(IiwaStatusSender(7))
    for port in ("position_commanded", "position_measured", "velocity_estimated", "torque_commanded",
                 "torque_measured", "torque_external"):
        builder.Connect(driver.GetOutputPort(port), sender.GetInputPort(port))
    publisher = builder.AddSystem(LcmPublisherSystem.Make("IIWA_STATUS", lcmt_iiwa_status, lcm,
                                                          publish_period=status_period, use_cpp_serializer=True))
    builder.Connect(sender.get_output_port(), publisher.get_input_port())
    diagram = builder.Build()
    simulator = Simulator(diagram)
    context = plant.GetMyMutableContextFromRoot(simulator.get_mutable_context())
    plant.SetPositions(context, np.array(q0))
    simulator.set_target_realtime_rate(1.0)
    simulator.Initialize()
    print("ready", flush=True)
    vmax = np.zeros(7)
    t = 0.0
    while t < duration:
        t = min(t + 0.01, duration)
        simulator.AdvanceTo(t)
        vmax = np.maximum(vmax, np.abs(plant.GetVelocities(context)))
    print(json.dumps({"q": plant.GetPositions(context).tolist(), "vmax": vmax.tolist()}), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), [float(x) for x in sys.argv[5:]])
