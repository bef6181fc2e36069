"""A config's robot.package_map against Drake's default map: a local copy replaces a remote package."""
import os
import shutil

import pytest

from drivers.core.paths import DEFAULT_ROBOT, package_map
from drivers.core.robot import load_robot
from drivers.run_config import parse_config
from dynamics_cy import PackageMap


def test_a_local_drake_models_replaces_the_default_remote_one_offline(tmp_path, monkeypatch):
    """An offline lab's copy of drake_models (a folder whose package.xml names it) serves the config's
    package://drake_models/... model: the default map's remote entry is replaced, nothing is fetched (Drake's
    download cache is an empty directory, and the remote's URLs are https)."""
    if not PackageMap().Contains("drake_models") or PackageMap().GetRemoteParams("drake_models") is None:
        pytest.skip("the default map has no remote drake_models (no pydrake resources here)")
    assert all(u.startswith("https://") for u in PackageMap().GetRemoteParams("drake_models").urls)
    (tmp_path / "empty_tmpdir").mkdir()
    monkeypatch.setenv("TEST_TMPDIR", str(tmp_path / "empty_tmpdir"))     # Drake's cache: nothing in it
    copy = tmp_path / "lab" / "drake_models"
    (copy / "iiwa_description" / "urdf").mkdir(parents=True)
    (copy / "package.xml").write_text("<package format='3'><name>drake_models</name></package>")
    shutil.copy(DEFAULT_ROBOT, copy / "iiwa_description" / "urdf" / "iiwa14.urdf")
    for entry in ("lab/drake_models", "lab/drake_models/package.xml"):
        cfg = parse_config({"robot": {"model": "package://drake_models/iiwa_description/urdf/iiwa14.urdf",
                                      "package_map": {"drake_models": entry}}}, tmp_path, "robot.yaml")
        assert cfg.robot.model == str(copy / "iiwa_description" / "urdf" / "iiwa14.urdf")
        assert os.path.samefile(cfg.robot.package_map["drake_models"], copy)
        robot = load_robot(cfg.robot)
        assert robot.n == 7
    pm = package_map({"drake_models": str(copy)})
    assert pm.GetRemoteParams("drake_models") is None and os.path.samefile(pm.GetPath("drake_models"), copy)
    with pytest.raises(RuntimeError, match="existing path is remote"):      # Drake's Add itself still refuses
        PackageMap().Add("drake_models", str(copy))
