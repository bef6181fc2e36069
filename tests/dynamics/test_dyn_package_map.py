"""PackageMap against pydrake's on the same package trees, its default search, and meshes of installed models."""
import logging
import os

import pytest

from dynamics_cy import MultibodyPlant, PackageMap, Parser


def package(folder, name, deprecated=None):
    folder.mkdir(parents=True, exist_ok=True)
    export = "" if deprecated is None else f"<export><deprecated>{deprecated}</deprecated></export>"
    (folder / "package.xml").write_text(f"<package format='3'><name>{name}</name>{export}</package>")
    return folder


@pytest.fixture
def tree(tmp_path):
    """Packages where ROS's crawl and a plain crawl differ: nested, ignored, hidden."""
    root = tmp_path / "ws"
    package(root / "a", "a")
    package(root / "a" / "inner", "a_inner")           # below a package: ROS stops at a
    package(root / "b" / "c", "c")
    (root / "b" / "CATKIN_IGNORE").write_text("")     # ROS skips b
    package(root / ".hidden" / "h", "h")              # nobody crawls hidden directories
    package(root / "old", "old", deprecated="use new")
    return root


def names_and_paths(pm):
    return {n: os.path.realpath(pm.GetPath(n)) for n in pm.GetPackageNames() if n not in ("drake", "drake_models")}


def drake_map():
    pytest.importorskip("pydrake", reason="pydrake is not installed (pip install drake)")
    from pydrake.multibody.parsing import PackageMap as DrakePackageMap
    return DrakePackageMap.MakeEmpty()


def test_populate_from_folder_finds_what_drake_finds(tree, caplog):
    ours, theirs = PackageMap.MakeEmpty(), drake_map()
    ours.PopulateFromFolder(str(tree))
    theirs.PopulateFromFolder(str(tree))
    assert names_and_paths(ours) == names_and_paths(theirs)
    assert set(ours.GetPackageNames()) == {"a", "a_inner", "c", "old"}
    assert ours.GetDeprecated("old") == "use new"        # C++ API only; pydrake warns in GetPath too
    with caplog.at_level(logging.WARNING, logger="dynamics_cy"):
        ours.GetPath("old")
    assert "Package 'old' is deprecated: use new" in caplog.text
    package(tree / "z" / "a_again", "a")     # found again elsewhere: the first path stays, with a warning
    with caplog.at_level(logging.WARNING, logger="dynamics_cy"):
        ours.PopulateFromFolder(str(tree))
    assert os.path.samefile(ours.GetPath("a"), tree / "a") and "ignoring newly-found path" in caplog.text


def test_ros_package_path_follows_ros_crawl_rules(tree, monkeypatch):
    monkeypatch.setenv("ROS_PACKAGE_PATH", f"{tree}:{tree / 'missing'}")
    ours, theirs = PackageMap.MakeEmpty(), drake_map()
    ours.PopulateFromRosPackagePath()
    theirs.PopulateFromRosPackagePath()
    assert names_and_paths(ours) == names_and_paths(theirs)
    assert set(ours.GetPackageNames()) == {"a", "old"}
    with pytest.raises(RuntimeError, match="PopulateFromRosPackagePath"):
        ours.PopulateFromEnvironment("ROS_PACKAGE_PATH")
    monkeypatch.setenv("MY_MODELS", str(tree / "b"))
    ours.PopulateFromEnvironment("MY_MODELS")         # a plain crawl: the ignore marker does not count
    assert ours.Contains("c")


def test_add_package_xml_remove_and_add_map(tree):
    ours, theirs = PackageMap.MakeEmpty(), drake_map()
    for pm in (ours, theirs):
        pm.AddPackageXml(str(tree / "old" / "package.xml"))
    assert names_and_paths(ours) == names_and_paths(theirs)
    other = PackageMap.MakeEmpty()
    other.Add("c", str(tree / "b" / "c"))
    ours.AddMap(other)
    assert ours.size() == 2 and ours.GetPackageNames() == ["c", "old"]
    ours.Remove("c")
    assert not ours.Contains("c")
    with pytest.raises(RuntimeError, match="not known"):
        ours.Remove("c")


def test_resolve_url_agrees_with_drake(tree):
    (tree / "a" / "meshes").mkdir()
    (tree / "a" / "meshes" / "m.obj").write_text("v 0 0 0\n")
    ours, theirs = PackageMap.MakeEmpty(), drake_map()
    for pm in (ours, theirs):
        pm.Add("a", str(tree / "a"))
    for url in ("package://a/meshes/m.obj", "model://a/meshes/m.obj", f"file://{tree}/a/meshes/m.obj",
                "package://a//meshes/m.obj"):
        assert os.path.realpath(ours.ResolveUrl(url)) == os.path.realpath(theirs.ResolveUrl(url)), url
    for url in ("package://a/meshes/none.obj", "package://nowhere/m.obj"):
        with pytest.raises(RuntimeError):
            ours.ResolveUrl(url)
        with pytest.raises(RuntimeError):
            theirs.ResolveUrl(url)


def test_default_map_has_pydrakes_package_and_installed_ones(robot_data):
    pm = PackageMap()
    assert os.path.samefile(pm.GetPath("example-robot-data"), robot_data)
    assert PackageMap.MakeEmpty().size() == 0
    try:
        from pydrake.multibody.parsing import PackageMap as DrakePackageMap
    except ImportError:
        return
    assert os.path.samefile(pm.GetPath("drake"), DrakePackageMap().GetPath("drake"))


@pytest.mark.parametrize("model", ["panda_description/urdf/panda.urdf", "baxter_description/urdf/baxter.urdf",
                                   "g1_description/urdf/g1_29dof_rev_1_0.urdf"])
def test_installed_models_find_their_meshes_by_default(robot_data, model):
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)                                 # no package added by hand
    parser.AddModels(str(robot_data / "robots" / model))
    assert not [d for d in parser.diagnostics if "did not resolve" in d]
    meshes = [g.shape.filename() for b in plant._bodies for g in plant.GetVisualGeometriesForBody(b)
              if hasattr(g.shape, "filename")]
    assert meshes and all(os.path.isfile(m) for m in meshes)


def test_a_model_with_malformed_uris_gets_one_warning(robot_data):
    """talos_full_v2 writes its meshes as package:///example-robot-data/... (an empty package name, which
    Drake's URI rule does not resolve either): one warning with the count, not one per mesh."""
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    parser.AddModels(str(robot_data / "robots" / "talos_data" / "robots" / "talos_full_v2.urdf"))
    unresolved = [d for d in parser.diagnostics if "did not resolve" in d]
    assert len(unresolved) == 1
    assert "package:///example-robot-data/" in unresolved[0] and "unknown package ''" in unresolved[0]
    assert int(unresolved[0].split(": ", 1)[1].split()[0]) > 50


def test_default_map_searches_ros_package_path_and_ament_prefixes(tree, tmp_path, monkeypatch):
    prefix = tmp_path / "install"
    package(prefix / "share" / "my-robot", "my_robot_description")    # ament layout, name != directory
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tree))
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    pm = PackageMap()
    assert {"a", "old", "my_robot_description", "my-robot"} <= set(pm.GetPackageNames())
    assert not pm.Contains("a_inner") and not pm.Contains("c")            # ROS's crawl rules
    assert os.path.samefile(pm.GetPath("my-robot"), pm.GetPath("my_robot_description"))
    monkeypatch.delenv("ROS_PACKAGE_PATH")
    monkeypatch.delenv("AMENT_PREFIX_PATH")
    assert not PackageMap().Contains("my-robot")
