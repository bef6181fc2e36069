"""PackageMap against pydrake's on the same package trees, its default map, remote packages, the installed
packages, and meshes of installed models."""
import copy
import hashlib
import json
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


def resource_root(root, models_json=None):
    """A Drake resource root as FindResource accepts it: drake/ with its sentinel and package.xml."""
    package(root / "drake", "drake")
    (root / "drake" / ".drake-find_resource-sentinel").write_text("")
    if models_json is not None:
        (root / "drake" / "multibody" / "parsing").mkdir(parents=True)
        (root / "drake" / "multibody" / "parsing" / "drake_models.json").write_text(json.dumps(models_json))
    return root


MODELS = {"urls": ["https://example.com/models.tar.gz"], "sha256": "ab" * 32, "strip_prefix": "models-1"}


def test_default_map_is_pydrakes(monkeypatch):
    pydrake = pytest.importorskip("pydrake.multibody.parsing", reason="pydrake is not installed (pip install drake)")
    monkeypatch.delenv("DRAKE_RESOURCE_ROOT", raising=False)
    ours, theirs = PackageMap(), pydrake.PackageMap()
    assert ours.GetPackageNames() == sorted(theirs.GetPackageNames()) == ["drake", "drake_models"]
    assert os.path.samefile(ours.GetPath("drake"), theirs.GetPath("drake"))
    assert ours.GetRemoteParams("drake_models").urls[0].startswith("https://github.com/RobotLocomotion/models/")
    assert PackageMap.MakeEmpty().size() == 0
    copied = PackageMap(other=ours)
    copied.Remove("drake")
    assert ours.Contains("drake") and copy.copy(ours).size() == copy.deepcopy(ours).size() == 2


def test_default_map_honours_drake_resource_root(tmp_path, monkeypatch, caplog):
    root = resource_root(tmp_path / "root", MODELS)
    monkeypatch.setenv("DRAKE_RESOURCE_ROOT", str(root))
    pm = PackageMap()
    assert pm.GetPackageNames() == ["drake", "drake_models"]
    assert os.path.samefile(pm.GetPath("drake"), root / "drake")
    assert pm.GetRemoteParams("drake_models") == PackageMap.RemoteParams(**MODELS)
    package(root / "drake_models", "drake_models")        # Drake's runfiles layout: a local drake_models
    assert os.path.samefile(PackageMap().GetPath("drake_models"), root / "drake_models")
    (root / "drake" / ".drake-find_resource-sentinel").unlink()   # not a resource root: ignored, as in Drake
    monkeypatch.setenv("DRAKE_RESOURCE_ROOT", f"{root}/")        # a new value: judged again
    with caplog.at_level(logging.WARNING, logger="dynamics_cy"):
        pm = PackageMap()
    assert "ignoring DRAKE_RESOURCE_ROOT" in caplog.text and "sentinel" in caplog.text
    assert not pm.Contains("drake") or not os.path.samefile(pm.GetPath("drake"), root / "drake")


def test_remote_params_and_json_are_drakes():
    params = PackageMap.RemoteParams(urls=["file:///tmp/missing.zip"], sha256="0" * 64, archive_type="zip",
                                     strip_prefix="prefix")
    assert params.ToJson() == ('{"archive_type":"zip","sha256":"' + "0" * 64 + '","strip_prefix":"prefix",'
                               '"urls":["file:///tmp/missing.zip"]}')
    assert copy.deepcopy(params) == params and "missing.zip" in repr(params)
    try:
        from pydrake.multibody.parsing import PackageMap as DrakePackageMap
    except ImportError:
        return
    for kw in ({"urls": ["https://a/b.zip"], "sha256": "1" * 64}, {**MODELS, "archive_type": "gztar"}):
        assert PackageMap.RemoteParams(**kw).ToJson() == DrakePackageMap.RemoteParams(**kw).ToJson()


def test_add_remote_records_and_resolves_from_drakes_cache_only(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_TMPDIR", str(tmp_path))               # Drake's cache: $TEST_TMPDIR/.cache/drake
    params = PackageMap.RemoteParams(**MODELS)
    pm = PackageMap.MakeEmpty()
    for bad, message in ((dict(MODELS, urls=[]), "at least one URL"),
                         (dict(MODELS, urls=["ftp://x"]), "unsupported URL"),
                         (dict(MODELS, sha256="xyz"), "invalid sha256"),
                         (dict(MODELS, archive_type="rar"), "unsupported archive type")):
        with pytest.raises(ValueError, match=message):
            pm.AddRemote("m", PackageMap.RemoteParams(**bad))
    pm.AddRemote(package_name="m", params=params)
    assert pm.Contains("m") and pm.GetPackageNames() == ["m"]
    with pytest.raises(RuntimeError, match="remote .*downloads nothing.*Drake's download cache"):
        pm.GetPath("m")
    with pytest.raises(RuntimeError, match="downloads nothing"):
        pm.ResolveUrl("package://m/model.urdf")
    pm.AddRemote("m", PackageMap.RemoteParams(**MODELS))          # the same params again: no change
    with pytest.raises(RuntimeError, match="remote package parameters differ"):
        pm.AddRemote("m", PackageMap.RemoteParams(**dict(MODELS, strip_prefix="other")))
    with pytest.raises(RuntimeError, match="existing path is remote"):
        pm.Add("m", str(tmp_path))
    fetched = tmp_path / ".cache" / "drake" / "package_map" / f"{'ab' * 32}-{hashlib.sha256(b'models-1').hexdigest()}"
    (fetched / "urdf").mkdir(parents=True)
    (fetched / "urdf" / "model.urdf").write_text("<robot name='r'/>")
    assert os.path.samefile(pm.GetPath("m"), fetched)
    assert os.path.samefile(pm.ResolveUrl("package://m/urdf/model.urdf"), fetched / "urdf" / "model.urdf")
    other = PackageMap.MakeEmpty()
    other.AddMap(pm)
    assert other.GetRemoteParams("m") == params and os.path.samefile(other.GetPath("m"), fetched)
    local = PackageMap.MakeEmpty()
    local.Add("m", str(tmp_path))
    with pytest.raises(RuntimeError, match="existing path is local"):
        local.AddMap(pm)


def test_a_file_url_remote_is_fetched_into_drakes_cache_as_drake_does(tmp_path, monkeypatch):
    """A remote package with a file:// URL needs no network: GetPath checks the archive's sha256, unpacks it,
    keeps its strip_prefix and puts it in Drake's cache under TEST_TMPDIR, at the directory pydrake uses."""
    import zipfile
    tmpdir = tmp_path / "test_tmpdir"
    tmpdir.mkdir()
    monkeypatch.setenv("TEST_TMPDIR", str(tmpdir))
    archive = tmp_path / "lab_models.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("lab_models-1/package.xml", "<package format='3'><name>lab_models</name></package>")
        z.writestr("lab_models-1/urdf/box.urdf", "<robot name='box'><link name='base'/></robot>")
        z.writestr("stray.txt", "outside the prefix: dropped")
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    params = dict(urls=["https://example.invalid/lab_models.zip", f"file://{archive}"], sha256=sha,
                  strip_prefix="lab_models-1")
    pm = PackageMap.MakeEmpty()
    pm.AddRemote("lab_models", PackageMap.RemoteParams(**params))
    path = pm.GetPath("lab_models")
    cache = tmpdir / ".cache" / "drake" / "package_map"
    assert os.path.samefile(path, cache / f"{sha}-{hashlib.sha256(b'lab_models-1').hexdigest()}")
    assert sorted(os.listdir(path)) == ["package.xml", "urdf"]
    assert "file://" in (cache / f"{os.path.basename(path)}.README").read_text()
    assert os.path.samefile(pm.ResolveUrl("package://lab_models/urdf/box.urdf"), os.path.join(path, "urdf", "box.urdf"))
    again = PackageMap.MakeEmpty()                                  # a second map finds the fetched copy
    again.AddRemote("lab_models", PackageMap.RemoteParams(**params))
    assert again.GetPath("lab_models") == path
    drake = drake_map()                                             # pydrake finds ours where it would put its own
    drake.AddRemote("lab_models", type(drake).RemoteParams(**params))
    assert os.path.samefile(drake.GetPath("lab_models"), path)

    wrong = PackageMap.MakeEmpty()
    wrong.AddRemote("bad", PackageMap.RemoteParams(urls=[f"file://{archive}"], sha256="0" * 64))
    with pytest.raises(RuntimeError, match=f"(?s)All downloads failed.*Checksum mismatch; was {sha} but wanted 0+\\."):
        wrong.GetPath("bad")
    prefix = PackageMap.MakeEmpty()
    prefix.AddRemote("p", PackageMap.RemoteParams(urls=[f"file://{archive}"], sha256=sha, strip_prefix="nope"))
    with pytest.raises(RuntimeError, match="strip_prefix='nope' does not exist within lab_models.zip"):
        prefix.GetPath("p")
    assert sorted(p.name for p in cache.iterdir() if p.is_dir()) == [os.path.basename(path)]   # nothing half-made


def test_installed_packages_are_added_on_request(robot_data):
    pm = PackageMap()
    assert not pm.Contains("example-robot-data")          # Drake's default map: drake, drake_models only
    pm.PopulateFromInstalledPackages()
    assert os.path.samefile(pm.GetPath("example-robot-data"), robot_data)
    assert pm.Contains("example_robot_descriptions") and {"drake", "drake_models"} <= set(pm.GetPackageNames())
    from drivers.core.paths import package_map  # what the stack's configs resolve with
    assert os.path.samefile(package_map().GetPath("example-robot-data"), robot_data)


@pytest.mark.parametrize("model", ["panda_description/urdf/panda.urdf", "baxter_description/urdf/baxter.urdf",
                                   "g1_description/urdf/g1_29dof_rev_1_0.urdf"])
def test_installed_models_find_their_meshes(robot_data, model):
    plant = MultibodyPlant(0.0)
    parser = Parser(plant)
    parser.package_map().PopulateFromInstalledPackages()
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
    parser.package_map().PopulateFromInstalledPackages()
    parser.AddModels(str(robot_data / "robots" / "talos_data" / "robots" / "talos_full_v2.urdf"))
    unresolved = [d for d in parser.diagnostics if "did not resolve" in d]
    assert len(unresolved) == 1
    assert "package:///example-robot-data/" in unresolved[0] and "unknown package ''" in unresolved[0]
    assert int(unresolved[0].split(": ", 1)[1].split()[0]) > 50


def test_installed_packages_search_ros_package_path_and_ament_prefixes(tree, tmp_path, monkeypatch):
    prefix = tmp_path / "install"
    package(prefix / "share" / "my-robot", "my_robot_description")    # ament layout, name != directory
    monkeypatch.setenv("ROS_PACKAGE_PATH", str(tree))
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(prefix))
    pm = PackageMap.MakeEmpty()
    pm.PopulateFromInstalledPackages()
    assert {"a", "old", "my_robot_description", "my-robot"} <= set(pm.GetPackageNames())
    assert not pm.Contains("a_inner") and not pm.Contains("c")            # ROS's crawl rules
    assert os.path.samefile(pm.GetPath("my-robot"), pm.GetPath("my_robot_description"))
    monkeypatch.delenv("ROS_PACKAGE_PATH")
    monkeypatch.delenv("AMENT_PREFIX_PATH")
    pm = PackageMap.MakeEmpty()
    pm.PopulateFromInstalledPackages()
    assert not pm.Contains("my-robot")
