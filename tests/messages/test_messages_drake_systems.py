"""Interop with Drake's C++ driver-side systems: IiwaCommandReceiver / PandaCommandReceiver
read what CommandEncoder writes, and StatusDecoder reads what IiwaStatusSender /
PandaStatusSender write (both through Drake's C++ LCM serializer)."""
import numpy as np
import pytest

from messages.codec import CommandEncoder, StatusDecoder

manipulation = pytest.importorskip("pydrake.manipulation",
                                   reason="pydrake (pip install drake) is not installed")
drake = pytest.importorskip("drake")
from pydrake.lcm import DrakeLcm  # noqa: E402
from pydrake.systems.analysis import Simulator  # noqa: E402
from pydrake.systems.framework import DiagramBuilder  # noqa: E402
from pydrake.systems.lcm import LcmInterfaceSystem, LcmPublisherSystem, LcmSubscriberSystem  # noqa: E402
from pydrake.systems.primitives import ConstantVectorSource  # noqa: E402

N = 7
Q = np.linspace(0.1, 0.7, N)


@pytest.mark.parametrize("kind, receiver, fields", [
    ("iiwa", lambda: manipulation.IiwaCommandReceiver(N, manipulation.IiwaControlMode.kPositionAndTorque),
     ("position", "torque")),
    ("panda", lambda: manipulation.PandaCommandReceiver(N, 4), ("torque",)),
])
def test_drake_command_receiver_reads_our_command(kind, receiver, fields):
    lcm = DrakeLcm("memq://")
    builder = DiagramBuilder()
    builder.AddSystem(LcmInterfaceSystem(lcm))
    message_type = getattr(drake, f"lcmt_{kind}_command")
    subscriber = builder.AddSystem(LcmSubscriberSystem.Make(
        "COMMAND", message_type, lcm, use_cpp_serializer=True))
    system = builder.AddSystem(receiver())
    builder.Connect(subscriber.get_output_port(), system.get_message_input_port())
    builder.ExportInput(system.get_position_measured_input_port())
    diagram = builder.Build()
    simulator = Simulator(diagram)
    diagram.get_input_port(0).FixValue(simulator.get_mutable_context(), np.zeros(N))

    encoder = CommandEncoder(kind, N, fields=fields, channel="COMMAND")
    arrays = {"position": Q, "torque": -2.0 * Q}
    assert encoder.encode(1000, **{name: arrays[name] for name in fields}) is not None
    lcm.Publish("COMMAND", encoder.tobytes())
    simulator.AdvanceTo(0.01)
    context = system.GetMyContextFromRoot(simulator.get_context())
    np.testing.assert_array_equal(system.get_commanded_torque_output_port().Eval(context), -2.0 * Q)
    if "position" in fields:
        np.testing.assert_array_equal(system.get_commanded_position_output_port().Eval(context), Q)


@pytest.mark.parametrize("kind, sender, ports", [
    ("iiwa", lambda: manipulation.IiwaStatusSender(N), {
        "position_measured": "position_measured", "velocity_estimated": "velocity_estimated",
        "position_commanded": "position_commanded", "torque_measured": "torque_measured",
        "torque_commanded": "torque_commanded", "torque_external": "torque_external"}),
    ("panda", lambda: manipulation.PandaStatusSender(N), {
        "position_measured": "position_measured", "velocity_measured": "velocity_estimated",
        "position_commanded": "position_commanded", "velocity_commanded": "velocity_commanded",
        "acceleration_commanded": "acceleration_commanded", "torque_measured": "torque_measured",
        "torque_commanded": "torque_commanded", "torque_external": "torque_external"}),
])
def test_status_decoder_reads_drake_status_sender(kind, sender, ports):
    lcm = DrakeLcm("memq://")
    received = []
    lcm.Subscribe("STATUS", received.append)
    builder = DiagramBuilder()
    system = builder.AddSystem(sender())
    publisher = builder.AddSystem(LcmPublisherSystem.Make(
        "STATUS", getattr(drake, f"lcmt_{kind}_status"), lcm, publish_period=0.0,
        use_cpp_serializer=True))
    builder.Connect(system.get_output_port(), publisher.get_input_port())
    values = {}
    for index in range(system.num_input_ports()):
        port = system.get_input_port(index)
        values[port.get_name()] = Q + index
        source = builder.AddSystem(ConstantVectorSource(values[port.get_name()][:port.size()]))
        builder.Connect(source.get_output_port(), port)
    diagram = builder.Build()
    diagram.ForcedPublish(diagram.CreateDefaultContext())
    lcm.HandleSubscriptions(0)

    decoder = StatusDecoder(kind, N, channel="STATUS")
    assert decoder.decode(received[0]), decoder.last_error
    for port_name, attribute in ports.items():
        np.testing.assert_array_equal(getattr(decoder, attribute), values[port_name])
