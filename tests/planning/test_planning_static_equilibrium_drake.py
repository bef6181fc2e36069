"""StaticEquilibriumProblem and its evaluators against pydrake.multibody.optimization on the same models (Drake's
on MultibodyPlant<AutoDiffXd> with a SceneGraph): a table on four spherical feet (a free body, quaternion
positions) and the iiwa with 30 N m at joint 2 and its wrist sphere (link 6) over a ground half space
(actuated; every other pair ignored in both). Geometry pairs are matched by body and registration order; Drake
orders them by GeometryId (its std::set) and may name them (B, A) where we name them (A, B), in which case its
λ is the force on our A, i.e. −λ (the witness points coincide in contact)."""
import re
import types

import numpy as np
import pytest

import dynamics_cy
from dynamics_cy.planning import (
    CollisionCandidates,
    ContactWrenchFromForceInWorldFrameEvaluator,
    Solve,
    StaticEquilibriumProblem,
)

FEET = [(0.35, 0.25), (0.35, -0.25), (-0.35, 0.25), (-0.35, -0.25)]


def add_table(m, plant, iiwa_urdf):
    table = plant.AddRigidBody("table", m.SpatialInertia.SolidBoxWithMass(5.0, 0.8, 0.6, 0.05))
    mu = m.CoulombFriction(0.6, 0.6)
    for i, (x, y) in enumerate(FEET):
        plant.RegisterCollisionGeometry(table, m.RigidTransform([x, y, -0.3]), m.Sphere(0.02), f"foot{i}", mu)
    plant.RegisterCollisionGeometry(plant.world_body(), m.RigidTransform(), m.HalfSpace(), "ground", mu)


def add_iiwa(m, plant, iiwa_urdf):
    urdf = re.sub(r'(<joint name="iiwa_joint_2".*?effort=")[^"]+', r"\g<1>30", open(iiwa_urdf).read(), flags=re.S)
    m.Parser(plant).AddModelsFromString(urdf, "urdf")
    plant.RegisterCollisionGeometry(plant.world_body(), m.RigidTransform(), m.HalfSpace(), "ground",
                                    m.CoulombFriction(0.7, 0.7))


MODELS = {  # name: (builder, the body pairs kept (None: all), initial guess of q)
    "table": (add_table, None, [np.cos(0.1), np.sin(0.1), 0, 0, 0, 0, 0.4]),
    "iiwa": (add_iiwa, {frozenset(("world", "iiwa_link_6"))}, [0, 1.9, 0, -0.3, 0, 0.5, 0]),
}


@pytest.fixture(params=sorted(MODELS))
def problems(request, pydrake, iiwa_urdf):
    """Our StaticEquilibriumProblem and Drake's on the same model, and for each Drake contact pair (in Drake's
    order) our pair index and the sign that maps our λ to Drake's."""
    from pydrake.multibody.optimization import StaticEquilibriumProblem as DrakeProblem
    add, kept, q0 = MODELS[request.param]
    ours = dynamics_cy.MultibodyPlant(0.0)
    add(dynamics_cy, ours, iiwa_urdf)
    ours.Finalize()
    builder = pydrake.DiagramBuilder()
    plant, scene_graph = pydrake.AddMultibodyPlantSceneGraph(builder, 0.0)
    add(pydrake, plant, iiwa_urdf)
    plant.Finalize()
    double_diagram = builder.Build()  # owns plant and scene_graph, used below for the geometry names
    diagram = double_diagram.ToAutoDiffXd()
    ad_plant = diagram.GetSubsystemByName(plant.get_name())
    root = diagram.CreateDefaultContext()
    ad_ctx = ad_plant.GetMyMutableContextFromRoot(root)
    inspector = scene_graph.model_inspector()

    def key_drake(g):
        body = plant.GetBodyFromFrameId(inspector.GetFrameId(g))
        return body.name(), list(plant.GetCollisionGeometriesForBody(body)).index(g)

    def key_ours(g):
        body = ours.get_body(dynamics_cy.BodyIndex(g.body_index))
        return body.name(), [id(h) for h in ours.GetCollisionGeometriesForBody(body)].index(id(g))

    def is_kept(names):
        return kept is None or frozenset(names) in kept

    candidates = sorted(inspector.GetCollisionCandidates(), key=lambda p: (p[0].get_value(), p[1].get_value()))
    d_pairs = [p for p in candidates if is_kept((key_drake(p[0])[0], key_drake(p[1])[0]))]
    ignored = [p for p in candidates if p not in d_pairs]
    drake = DrakeProblem(ad_plant, ad_ctx, set(ignored))
    o_ignored = [p for p in CollisionCandidates(ours) if not is_kept((key_ours(p[0])[0], key_ours(p[1])[0]))]
    problem = StaticEquilibriumProblem(ours, ours.CreateDefaultContext(), o_ignored)
    o_keys = [(key_ours(a), key_ours(b)) for a, b in problem.contact_pairs()]
    mapping = []
    for a, b in d_pairs:
        ka, kb = key_drake(a), key_drake(b)
        k = o_keys.index((ka, kb)) if (ka, kb) in o_keys else o_keys.index((kb, ka))
        mapping.append((k, 1.0 if o_keys[k] == (ka, kb) else -1.0, (a, b)))
    assert len(mapping) == len(problem.contact_pairs()) >= 1
    return types.SimpleNamespace(name=request.param, ours=ours, problem=problem, drake=drake, ad_plant=ad_plant,
                                 ad_ctx=ad_ctx, mapping=mapping, q0=np.array(q0, float),
                                 keep_alive=(double_diagram, diagram, root))


def split(p):
    """Our equilibrium binding and complementarity bindings (by pair), then Drake's (in Drake's pair order)."""
    ours = p.problem.prog().generic_constraints()
    theirs = p.drake.prog().generic_constraints()
    nv = p.ours.num_velocities()
    o_eq = [b for b in ours if b.evaluator().num_constraints() == nv]
    d_eq = [b for b in theirs if b.evaluator().num_constraints() == nv]
    assert len(o_eq) == len(d_eq) == 1
    o_comp = [b for b in ours if b.evaluator().num_constraints() == 4]
    d_comp = [b for b in theirs if b.evaluator().num_constraints() == 4]
    assert len(o_comp) == len(d_comp) == len(p.mapping)
    return o_eq[0], o_comp, d_eq[0], d_comp


def drake_eval(pydrake, evaluator, x):
    y = evaluator.Eval(pydrake.InitializeAutoDiff(np.asarray(x, float)))
    return np.array([v.value() for v in y.reshape(-1)]), pydrake.ExtractGradient(y)


def random_q(p, rng):
    if p.name == "table":  # a non-unit quaternion (both normalize it) and a height near the ground
        return np.r_[0.7 * rng.normal(size=4), 0.1 * rng.normal(size=2), 0.3 + 0.05 * rng.normal()]
    return rng.uniform(p.ours.GetPositionLowerLimits(), p.ours.GetPositionUpperLimits())


def test_contact_wrench_evaluator_matches_drake(pydrake, problems):
    """ContactWrenchFromForceInWorldFrameEvaluator on [q; λ]: F_AB_W = [0; λ], values and gradients."""
    from pydrake.multibody.optimization import ContactWrenchFromForceInWorldFrameEvaluator as DrakeEvaluator
    p = problems
    rng = np.random.default_rng(40)
    for k, sign, (a, b) in p.mapping:
        pair = p.problem.contact_pairs()[k]
        pair = pair if sign > 0 else pair[::-1]  # Drake's orientation (A, B)
        ours = ContactWrenchFromForceInWorldFrameEvaluator(p.ours, p.ours.CreateDefaultContext(), pair)
        theirs = DrakeEvaluator(p.ad_plant, p.ad_ctx, (a, b))
        assert (ours.num_outputs(), ours.num_vars()) == (theirs.num_outputs(), theirs.num_vars())
        for _ in range(2):
            x = np.r_[random_q(p, rng), rng.normal(size=3)]
            y, dy = ours.EvalWithGradient(x)
            y_d, dy_d = drake_eval(pydrake, theirs, x)
            np.testing.assert_allclose(y, y_d, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(dy, dy_d, rtol=1e-12, atol=1e-12)


def test_static_equilibrium_constraints_match_drake(pydrake, problems):
    """StaticEquilibriumConstraint on [q; u; λ...] and the friction-cone complementarity constraint on
    [q; λ; α; β] (one per pair): values and gradients at random points equal Drake's (spheres on a half space,
    where our q-gradients are exact); bounds equal once both complementarity tolerances are set alike."""
    p = problems
    o_eq, o_comp, d_eq, d_comp = split(p)
    nq, nu = p.ours.num_positions(), p.ours.num_actuators()
    rng = np.random.default_rng(41)
    for _ in range(3):
        q, u = random_q(p, rng), 10 * rng.normal(size=nu)
        lam = rng.normal(size=(len(p.mapping), 3))
        y, dy = o_eq.evaluator().EvalWithGradient(np.r_[q, u, lam.reshape(-1)])
        d_lam = np.concatenate([s * lam[k] for k, s, _ in p.mapping])
        y_d, dy_d = drake_eval(pydrake, d_eq.evaluator(), np.r_[q, u, d_lam])
        dy_mapped = np.hstack([dy[:, :nq + nu]] + [s * dy[:, nq + nu + 3 * k:nq + nu + 3 * k + 3]
                                                    for k, s, _ in p.mapping])
        np.testing.assert_allclose(y, y_d, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(y_d).max()))
        np.testing.assert_allclose(dy_mapped, dy_d, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(dy_d).max()))
        for (k, s, _), d_binding in zip(p.mapping, d_comp):
            ab = rng.uniform(0, 1, 2)
            y, dy = o_comp[k].evaluator().EvalWithGradient(np.r_[q, lam[k], ab])
            y_d, dy_d = drake_eval(pydrake, d_binding.evaluator(), np.r_[q, s * lam[k], ab])
            np.testing.assert_allclose(y, y_d, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(np.c_[dy[:, :nq], s * dy[:, nq:nq + 3], dy[:, nq + 3:]], dy_d, rtol=1e-10,
                                       atol=1e-12)
    np.testing.assert_array_equal(o_eq.evaluator().lower_bound(), d_eq.evaluator().lower_bound())
    np.testing.assert_array_equal(o_eq.evaluator().upper_bound(), d_eq.evaluator().upper_bound())
    assert d_comp[0].evaluator().upper_bound()[3] == 1e-3 and o_comp[0].evaluator().upper_bound()[3] == 0.0  # defaults
    p.problem.UpdateComplementarityTolerance(1e-4)
    p.drake.UpdateComplementarityTolerance(1e-4)
    for (k, _, _), d_binding in zip(p.mapping, d_comp):
        np.testing.assert_array_equal(o_comp[k].evaluator().lower_bound(), d_binding.evaluator().lower_bound())
        np.testing.assert_array_equal(o_comp[k].evaluator().upper_bound(), d_binding.evaluator().upper_bound())


def test_static_equilibrium_solution_satisfies_drakes_problem(pydrake, problems):
    """Our solution, carried over to Drake's decision variables (q, u, λ with the pair orientation, α, β),
    satisfies every constraint of Drake's StaticEquilibriumProblem (StaticEquilibriumConstraint, the friction
    cones and complementarity with Drake's tolerance set to our default 0, joint limits, α, β ≥ 0) to 1e-6;
    a 5% change of one loaded contact force breaks Drake's equilibrium constraint."""
    p = problems
    prog = p.problem.prog()
    prog.SetInitialGuess(p.problem.q_vars(), p.q0)
    result = Solve(prog)
    assert result.is_success(), result.GetInfeasibleConstraintNames(prog)
    o_eq, o_comp, d_eq, d_comp = split(p)
    nq = p.ours.num_positions()
    q, u = result.GetSolution(p.problem.q_vars()), result.GetSolution(p.problem.u_vars())
    comp = [result.GetSolution(b.variables()) for b in o_comp]  # [q; λ; α; β] per pair
    d_prog = p.drake.prog()
    p.drake.UpdateComplementarityTolerance(0.0)

    def drake_x(lam_scale):
        x = np.full(d_prog.num_vars(), np.nan)
        lam = [s * lam_scale[i] * comp[k][nq:nq + 3] for i, (k, s, _) in enumerate(p.mapping)]
        x[d_prog.FindDecisionVariableIndices(d_eq.variables())] = np.r_[q, u, np.concatenate(lam)]
        for i, ((k, _, _), d_binding) in enumerate(zip(p.mapping, d_comp)):
            x[d_prog.FindDecisionVariableIndices(d_binding.variables())] = np.r_[q, lam[i], comp[k][nq + 3:]]
        assert not np.isnan(x).any()
        return x

    ones = np.ones(len(p.mapping))
    assert d_prog.CheckSatisfied(d_prog.GetAllConstraints(), drake_x(ones), 1e-6), \
        [(b.evaluator().get_description(), d_prog.EvalBinding(b, drake_x(ones))) for b in d_prog.GetAllConstraints()]
    normal = [c[nq + 3] for c in comp]  # α = n̂ᵀλ, the normal force
    loaded = int(np.argmax([normal[k] for k, _, _ in p.mapping]))
    assert normal[p.mapping[loaded][0]] > 1.0  # a real contact force (the iiwa leans on the ground)
    scale = ones.copy()
    scale[loaded] = 1.05
    assert not d_prog.CheckSatisfied([d_eq], drake_x(scale), 1e-6)
