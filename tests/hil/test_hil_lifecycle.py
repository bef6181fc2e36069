"""The loop's lifecycle (hil.lifecycle, docs/hil.md): the states a run passes through, steps out of
order refused, the controller active exactly while the safety is RUNNING, the exit command sent by
deactivate, and the safety transitions as named records, in lockstep against the simulated iiwa."""
import lcm
import pytest

from drivers.core.robot import load_robot
from drivers.run_config import load_config
from hil.controllers import make_controller
from hil.lifecycle import LifecycleError, LifecycleState, Mode
from hil.lockstep import make_lockstep
from hil.loop import ControlLoop
from messages.codec import CommandDecoder
from messages.enums import FaultCode, SafetyState


def config(**overrides):
    return load_config("configs/demo.yaml", {"viz": False, "trajectory": {"type": "hold"}, **overrides})


def test_a_run_goes_configured_active_inactive_and_ends_with_the_exit_command():
    loop, sim = make_lockstep(config())
    assert loop.lifecycle is LifecycleState.CONFIGURED and loop.mode is Mode.LOCKSTEP and loop.sim is sim
    sent = []
    loop.lc.subscribe(loop.channels.command, lambda channel, data: sent.append(bytes(data)))
    states = []
    sim.publish_status()
    summary = loop.run(0.3, on_tick=lambda lp: states.append((lp.lifecycle, lp.controller.lifecycle)))
    assert set(states) == {(LifecycleState.ACTIVE, LifecycleState.ACTIVE)}       # RUNNING from the first tick
    assert loop.lifecycle is LifecycleState.INACTIVE and loop.controller.lifecycle is LifecycleState.INACTIVE
    assert summary["status"]["exit_command_sent"] and loop.hardware.commands.exit_sent
    while loop.lc.handle_timeout(0) > 0:
        pass
    last = CommandDecoder("iiwa", 7)
    assert last.decode(sent[-1]) and len(sent) == summary["status"]["commands_sent"]
    loop.close()
    assert loop.lifecycle is LifecycleState.FINALIZED
    with pytest.raises(LifecycleError, match="FINALIZED"):
        loop.configure()


def test_steps_out_of_order_are_refused_and_repeated_ones_are_no_ops():
    cfg = config()
    loop = ControlLoop(cfg, load_robot(cfg.robot), lcm.LCM("memq://"), "lockstep")
    assert loop.lifecycle is LifecycleState.UNCONFIGURED and loop.mode is Mode.LOCKSTEP
    with pytest.raises(LifecycleError, match="UNCONFIGURED -> ACTIVE"):
        loop.activate()
    with pytest.raises(LifecycleError, match="UNCONFIGURED -> INACTIVE"):
        loop.deactivate()
    assert loop.configure() is loop and loop.configure() is loop
    loop.activate()
    loop.activate()
    assert loop.lifecycle is LifecycleState.ACTIVE
    loop.deactivate()
    assert loop.lifecycle is LifecycleState.INACTIVE and not loop.hardware.commands.exit_sent   # no status: nothing
    loop.activate()                                                                           # again, from INACTIVE
    assert loop.lifecycle is LifecycleState.ACTIVE
    loop.close()
    assert loop.lifecycle is LifecycleState.FINALIZED


def test_the_controller_is_active_only_while_the_safety_is_running_and_transitions_are_named():
    """An e-stop press and release: RUNNING -> SAFE_STOP -> INIT -> RUNNING; the controller is
    deactivated on leaving RUNNING and activated on each entry."""
    from messages import lcmt_hil_estop
    loop, sim = make_lockstep(config())
    seen = []
    publish = loop.telemetry.safety_event

    def record(tick, utime, transition, source="safety"):
        seen.append((transition, loop.controller.lifecycle))
        publish(tick, utime, transition, source)

    loop.telemetry.safety_event = record

    def estop(latched):
        msg = lcmt_hil_estop()
        msg.latched, msg.source, msg.reason = latched, "test", "pressed" if latched else "released"
        loop.lc.publish(loop.channels.estop, msg.encode())

    ticks = []

    def on_tick(lp):
        ticks.append((lp.safety.state, lp.controller.lifecycle))
        if len(ticks) == 50:
            estop(True)
        elif len(ticks) == 100:
            estop(False)
    sim.publish_status()
    loop.run(0.2, on_tick=on_tick)
    states = [(t.previous, t.state, t.fault) for t, _ in seen]
    assert states == [(SafetyState.INIT, SafetyState.RUNNING, FaultCode.NONE),
                      (SafetyState.RUNNING, SafetyState.SAFE_STOP, FaultCode.ESTOP),
                      (SafetyState.SAFE_STOP, SafetyState.INIT, FaultCode.NONE),
                      (SafetyState.INIT, SafetyState.RUNNING, FaultCode.NONE)]
    assert seen[1][0].describe() == "RUNNING -> SAFE_STOP [ESTOP]: e-stop pressed by test: pressed"
    for state, controller in ticks:
        assert (controller is LifecycleState.ACTIVE) == (state == SafetyState.RUNNING), (state, controller)


def test_make_controller_returns_a_configured_controller_with_the_lifecycle():
    cfg = config()
    ctl = make_controller(load_robot(cfg.robot).plant, cfg.controller)
    assert ctl.lifecycle is LifecycleState.CONFIGURED
    ctl.activate()
    ctl.deactivate()
    assert ctl.lifecycle is LifecycleState.INACTIVE
