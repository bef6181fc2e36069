"""The collision guard (hil.collision_guard): its model from safety.collision, the trip through the
safety monitor with the pair named, the warning policy's force along ∂φ/∂q, per-pair margins, and IK's
minimum-distance constraint on the guard's own model (a goal the planner accepts, the guard lets through)."""
import numpy as np
import pytest

from drivers.core.config import CollisionConfig
from drivers.core.robot import load_robot
from drivers.core.schema import ConfigError, load
from drivers.run_config import load_config
from dynamics_cy.planning import InverseKinematics, Solve
from hil.collision_guard import CollisionGuard, make_guard
from hil.safety import SafetyMonitor
from messages.enums import FaultCode, SafetyState

GRIPPER = {"name": "gripper", "frame": "iiwa_link_7", "p0": [0, 0, 0.10], "p1": [0, 0, 0.20], "radius": 0.085}
TABLE = {"name": "table", "size": [0.8, 1.2, 0.1], "xyz": [0.7, 0.0, 0.05]}
START = np.array([0.0, 0.6, 0.0, -1.2, 0.0, 0.8, 0.0])
DOWN = np.array([0.0, 1.4, 0.0, -1.0, 0.0, 1.0, 0.0])     # the gripper into the table


def collision(**keys) -> CollisionConfig:
    return load(CollisionConfig, {"capsules": [GRIPPER], "boxes": [TABLE], **keys}, "safety.collision")


@pytest.fixture(scope="module")
def robot():
    return load_robot(load_config("configs/demo.yaml", {"viz": False}).robot)


def table_distance(guard, q):
    guard.check(q)
    k = guard.names.index("gripper / table")
    return guard.distance[k]


def test_the_safety_monitor_trips_collision_imminent_naming_the_pair_and_holds_it(robot):
    cfg = load_config("configs/demo.yaml", {"viz": False, "safety": {"collision": collision(), "recover": True,
                                                                     "recover_after_periods": 2}}).safety
    safety = SafetyMonitor(robot.plant, cfg, 1_000_000)
    safety.collision = make_guard(robot.plant, cfg.collision)
    v = np.zeros(7)
    assert safety.check(0, 0, True, START, v, 0.0).state == SafetyState.RUNNING
    s = next(s for s in np.linspace(0, 1, 400) if table_distance(safety.collision, START + s * (DOWN - START)) < 0.01)
    q = START + s * (DOWN - START)
    t = safety.check(1, 0, True, q, v, 0.0)
    assert t.state == SafetyState.FAULT and t.fault == FaultCode.COLLISION_IMMINENT
    assert t.text.startswith("gripper / table at ") and "stop 10.0 mm" in t.text
    for tick in range(2, 10):                                  # no recovery while the pair is below the stop
        assert safety.check(tick, 0, True, q, v, 0.0) is None
    assert safety.check(10, 0, True, START, v, 0.0) is None and safety.check(11, 0, True, START, v, 0.0).state \
        == SafetyState.RUNNING                                  # clear (and at rest) for 2 ticks: recovered


@pytest.mark.parametrize("policy", ["damping", "repulsive"])
def test_the_policy_pushes_along_the_distance_gradient(robot, policy):
    """τ = f ∂φ/∂qᵀ with f from the policy's formula; f ≥ 0, so τ never drives the pair closer
    (τ·∂φ/∂q ≥ 0); damping acts only on an approach."""
    guard = CollisionGuard(robot.plant, collision(warn_distance=0.1, stop_distance=0.01, policy=policy,
                                                   damping=300.0, stiffness=2000.0, max_force=1e6))
    s = next(s for s in np.linspace(0, 1, 400) if table_distance(guard, START + s * (DOWN - START)) < 0.05)
    q = START + s * (DOWN - START)
    d = table_distance(guard, q)
    for v, approaching in ((0.3 * (DOWN - START), True), (-0.3 * (DOWN - START), False)):
        tau = np.zeros(7)
        guard.check(q)
        guard.shape(q, v, tau)
        k = guard.names.index("gripper / table")
        assert list(np.flatnonzero(guard.policy.inside)) == [k]
        grad = guard.policy.gradients[k].copy()
        h = 1e-6
        fd = np.array([(table_distance(guard, q + h * e) - table_distance(guard, q - h * e)) / (2 * h)
                       for e in np.eye(7)])
        np.testing.assert_allclose(grad, fd, atol=1e-6)
        rate = grad @ v
        assert (rate < 0) == approaching
        s_zone = (0.1 - d) / (0.1 - 0.01)
        f = 300.0 * s_zone * max(0.0, -rate) + (2000.0 * (0.1 - d) if policy == "repulsive" else 0.0)
        np.testing.assert_allclose(tau, f * grad, rtol=1e-12, atol=1e-12)
        assert tau @ grad >= 0.0
        if policy == "damping" and not approaching:
            assert not tau.any()
    assert guard.warn_events == 1 and guard.warn_ticks == 2


def test_every_pair_in_its_warning_zone_is_slowed(robot):
    """The gripper folding back onto the base over a floor: both pairs inside their warning zone, the
    floor's the nearer (and barely approached), the base's approached fast. Each pair gets its own force
    along its own ∂φ/∂q (checked by finite differences): τ = Σ_k f_k ∂φ_k/∂qᵀ; the nearest pair alone
    would leave the base's approach unchecked."""
    start, folded = np.array([0, -0.5, 0, 1, 0, -1, 0.0]), np.array([0.0, -1.95, -0.16, 1.74, -0.08, -1.72, 0.0])
    q, v = start + 0.65 * (folded - start), 0.3 * (folded - start)
    guard = CollisionGuard(robot.plant, load(CollisionConfig, {
        "capsules": [GRIPPER], "planes": [{"name": "floor", "point": [0, 0, -0.17]}], "warn_distance": 0.1,
        "stop_distance": 0.0, "max_force": 1e6}, "safety.collision"))
    tau = np.zeros(7)
    assert not guard.check(q)
    guard.shape(q, v, tau)
    base, floor = guard.names.index("iiwa_link_0_collision / gripper"), guard.names.index("gripper / floor")
    assert sorted(np.flatnonzero(guard.policy.inside)) == sorted([base, floor]) and guard.warn_events == 2
    assert guard.kernel.nearest(guard.distance, guard.warn) == floor           # the nearer one
    expected = np.zeros(7)
    for k in (base, floor):
        grad = guard.policy.gradients[k]
        h = 1e-6
        fd = []
        for e in np.eye(7):
            guard.check(q + h * e)
            up = guard.distance[k]
            guard.check(q - h * e)
            fd.append((up - guard.distance[k]) / (2 * h))
        np.testing.assert_allclose(grad, fd, atol=1e-6)
        guard.check(q)
        rate = grad @ v
        f = 300.0 * (0.1 - guard.distance[k]) / 0.1 * max(0.0, -rate)
        assert guard.policy.force[k] == pytest.approx(f, rel=1e-12) and rate < 0
        expected += f * grad
    np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=1e-12)
    assert guard.policy.force[base] > 20.0 > 1.0 > guard.policy.force[floor]   # the base approached at 0.26 m/s


def test_per_pair_margins_and_allowed_pairs(robot):
    guard = CollisionGuard(robot.plant, collision(pairs=[{"pair": ["gripper", "table"], "warn_distance": 0.2,
                                                          "stop_distance": 0.05}],
                                                  allowed=[["iiwa_link_1", "table"]]))
    k = guard.names.index("gripper / table")
    assert (guard.warn[k], guard.stop[k]) == (0.2, 0.05)
    others = [i for i in range(len(guard.names)) if i != k]
    assert set(guard.warn[others]) == {0.04} and set(guard.stop[others]) == {0.01}
    assert "iiwa_link_1_collision / table" not in guard.names and "iiwa_link_2_collision / table" in guard.names
    with pytest.raises(ConfigError, match=r"pairs\[0\]: gripper / table: stop_distance 0.3 exceeds warn_distance 0.04"):
        CollisionGuard(robot.plant, collision(pairs=[{"pair": ["table", "gripper"], "stop_distance": 0.3}]))
    with pytest.raises(ConfigError, match=r"pairs\[0\].pair: \['tabel', 'gripper'\] names no checked pair"):
        CollisionGuard(robot.plant, collision(pairs=[{"pair": ["tabel", "gripper"], "stop_distance": 0.01}]))
    with pytest.raises(ConfigError, match=r"capsules\[0\].frame: the robot's model has no frame 'flange'"):
        CollisionGuard(robot.plant, collision(capsules=[{**GRIPPER, "frame": "flange"}]))
    with pytest.raises(ConfigError, match=r"allowed\[1\]: 'tabel' is no capsule, body, box or plane"):
        CollisionGuard(robot.plant, collision(allowed=[["iiwa_link_1", "table"], ["gripper", "tabel"]]))
    with pytest.raises(ConfigError, match=r"planes\[0\]: .*normal must not be zero"):
        collision(planes=[{"name": "wall", "normal": [0, 0, 0]}])
    with pytest.raises(ConfigError, match=r"boxes\[0\].size\[2\]: must be > 0"):
        collision(boxes=[{**TABLE, "size": [0.8, 1.2, 0.0]}])


def test_no_guard_when_disabled_or_nothing_to_check(robot):
    assert make_guard(robot.plant, collision(enabled=False)) is None
    assert make_guard(robot.plant, load(CollisionConfig, {"fit": False}, "safety.collision")) is None


def test_a_goal_the_planner_accepts_the_guard_lets_through(robot):
    """IK to a hand position just above the table: without the bound its solution trips the guard; with
    AddMinimumDistanceLowerBoundConstraint on the guard's own capsule model it is accepted and passes."""
    plant = robot.plant
    guard = CollisionGuard(plant, collision())
    E, W = plant.GetFrameByName("iiwa_link_7"), plant.world_frame()
    goal = np.array([0.65, 0.0, 0.22])                   # link 7's origin 12 cm above the table top

    def solve(bounded):
        ik = InverseKinematics(plant)
        ik.AddPositionConstraint(E, [0, 0, 0], W, goal - 0.005, goal + 0.005)
        if bounded:
            ik.AddMinimumDistanceLowerBoundConstraint(guard.cfg.warn_distance, 0.02, capsules=guard.model)
        ik.prog().SetInitialGuess(ik.q(), DOWN)
        result = Solve(ik.prog(), solver_options={"max_restarts": 10})
        assert result.is_success()
        return result.GetSolution(ik.q())

    assert guard.check(solve(False))                      # the plain goal: the gripper in the table
    q = solve(True)
    assert not guard.check(q)
    assert guard.distance.min() >= guard.cfg.warn_distance - 1e-6
