"""The model/data split: every kernels object of a plant shares its one compiled Model (a parameter
changed there is seen by all), each owns its Data; checked against the physics of a payload."""
import numpy as np
import pytest

from tests.plants import parsed


def test_kernels_share_the_plants_one_model_and_own_their_data(iiwa):
    k1, k2 = iiwa.kernels(), iiwa.kernels()
    assert k1.model is k2.model is iiwa.compiled_model()
    assert k1.data is not k2.data
    assert k1.data.model is k1.model


@pytest.mark.parametrize("body_name", ["iiwa_link_7", "iiwa_link_ee"])   # a moving body and a welded one
def test_a_payload_set_on_the_model_is_seen_by_every_user(iiwa, body_name):
    """Adding Δm at the body's centre of mass changes τ_g by Jv_WCcm_Wᵀ Δm g (the virtual work of the
    payload's weight), for both kernels objects and the facade, and the change can be undone."""
    body = iiwa.GetBodyByName(body_name)
    M = body.default_spatial_inertia()
    m, com, I = M.get_mass(), M.get_com(), M.CalcRotationalInertia().CopyToFullMatrix3()
    n = iiwa.num_velocities()
    q = iiwa.GetDefaultPositions() + np.random.default_rng(5).normal(size=n) * 0.5
    k1, k2 = iiwa.kernels(), iiwa.kernels()
    before, after1, after2 = np.zeros(n), np.zeros(n), np.zeros(n)
    k1.gravity(q, before)
    J, Jdot_v = np.zeros((3, n)), np.zeros(3)
    k1.points_jacobian_bias(q, np.zeros(n), [body.body_frame()], com.reshape(1, 3).copy(), J, Jdot_v)

    dm = 2.5
    iiwa.compiled_model().set_body_inertia(int(body.index()), m + dm, com, I)
    try:
        k1.gravity(q, after1)
        k2.gravity(q, after2)
        ctx = iiwa.CreateDefaultContext()
        iiwa.SetPositions(ctx, q)
        facade = iiwa.CalcGravityGeneralizedForces(ctx)
    finally:
        iiwa.compiled_model().set_body_inertia(int(body.index()), m, com, I)
    expected = before + J.T @ (dm * iiwa.gravity_field().gravity_vector())
    assert np.linalg.norm(expected - before) > 1.0          # the payload matters
    np.testing.assert_allclose(after1, expected, atol=1e-12)
    np.testing.assert_array_equal(after2, after1)
    np.testing.assert_allclose(facade, expected, atol=1e-12)
    k2.gravity(q, after2)
    np.testing.assert_allclose(after2, before, atol=1e-13)


def test_a_payload_set_after_finalize_matches_one_compiled_in(iiwa_urdf, iiwa, tmp_path):
    """The same mass set on the compiled model, or in the URDF before Finalize, gives the same dynamics."""
    text = iiwa_urdf.read_text()
    heavier = 1.2 + 1.75
    link7 = text.index('<link name="iiwa_link_7">')
    old = '<mass value="1.2"/>'
    assert text.index(old, link7) < text.index("</link>", link7)
    edited = text[:link7] + text[link7:].replace(old, f'<mass value="{heavier!r}"/>', 1)
    (tmp_path / "heavier.urdf").write_text(edited)
    other = parsed(tmp_path / "heavier.urdf")
    M = other.GetBodyByName("iiwa_link_7").default_spatial_inertia()
    assert M.get_mass() == heavier
    iiwa.compiled_model().set_body_inertia(int(iiwa.GetBodyByName("iiwa_link_7").index()), heavier, M.get_com(),
                                           M.CalcRotationalInertia().CopyToFullMatrix3())
    n = iiwa.num_velocities()
    rng = np.random.default_rng(8)
    q, v, vdot = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    a, b, before = np.zeros(n), np.zeros(n), np.zeros(n)
    Ma, Mb = np.zeros((n, n)), np.zeros((n, n))
    iiwa.kernels().inverse_dynamics(q, v, vdot, a)
    other.kernels().inverse_dynamics(q, v, vdot, b)
    parsed(iiwa_urdf).kernels().inverse_dynamics(q, v, vdot, before)
    iiwa.kernels().mass_matrix(q, Ma)
    other.kernels().mass_matrix(q, Mb)
    assert np.linalg.norm(a - before) > 0.1
    np.testing.assert_allclose(a, b, atol=1e-11)
    np.testing.assert_allclose(Ma, Mb, atol=1e-12)


def test_set_body_inertia_rejects_bad_input(iiwa):
    model = iiwa.compiled_model()
    with pytest.raises(ValueError, match="out of range"):
        model.set_body_inertia(iiwa.num_bodies(), 1.0, np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match="mass must be >= 0"):
        model.set_body_inertia(1, -1.0, np.zeros(3), np.eye(3))
    with pytest.raises(ValueError, match="expected 9 values"):
        model.set_body_inertia(1, 1.0, np.zeros(3), np.eye(2))

