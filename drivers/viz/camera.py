"""Meldis's camera framing a robot: the Meshcat parameters (`meldis --meshcat-params FILE`) whose
initial camera sees the whole model.

Meldis takes no camera over LCM; its Meshcat reads `initial_properties` at start. The model's extent
is the sphere (centre c, radius r) around its bodies' origins at q, grown by MARGIN for the links'
geometry. Meshcat's orbit camera looks at the world origin W with a vertical field of view of FOV_DEG,
so a camera at distance d = (|c| + r) / sin(FOV/2) from W along VIEW sees every point within |c| + r of W.
Meshcat's camera lives in its y-up frame: p_threejs = (x, z, −y) of p_W.
"""
from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np

CAMERA = "/Cameras/default/rotated/<object>"
FOV_DEG = 75.0                             # Meshcat's default perspective camera
MARGIN = 0.15                              # m beyond the outermost body origin (a link's geometry)
VIEW = np.array([1.0, -0.8, 0.6])          # from the origin to the camera: front, right, above


def model_extent(plant, q=None) -> tuple[np.ndarray, float]:
    """(centre c, radius r) in m of a sphere around every body of the finalized `plant` at q (default:
    its default positions)."""
    context = plant.CreateDefaultContext()
    if q is not None:
        plant.SetPositions(context, np.asarray(q, dtype=float))
    p = np.array([plant.EvalBodyPoseInWorld(context, plant.get_body(i)).translation()
                  for i in range(plant.num_bodies())])
    lo, hi = p.min(0), p.max(0)
    c = (lo + hi) / 2
    return c, float(np.linalg.norm(p - c, axis=1).max()) + MARGIN


def camera_position(plant, q=None) -> np.ndarray:
    """p_WC (m): where the camera sees the whole model while looking at the origin."""
    c, r = model_extent(plant, q)
    d = (np.linalg.norm(c) + r) / math.sin(math.radians(FOV_DEG) / 2)
    return VIEW / np.linalg.norm(VIEW) * d


def meshcat_params_yaml(plant, q=None) -> str:
    """MeshcatParams YAML (pydrake.geometry.MeshcatParams) setting the camera to camera_position()."""
    x, y, z = camera_position(plant, q)
    return ("# Meldis's camera framing the robot: python -m pydrake.visualization.meldis --meshcat-params THIS\n"
            f"initial_properties:\n- {{path: \"{CAMERA}\", property: position, "
            f"value: [{x:.3f}, {z:.3f}, {-y:.3f}]}}\n")


def write_meshcat_params(plant, name: str, q=None) -> Path:
    """The parameters written to <tmp>/hil-meldis-<name>.yaml; returns the file."""
    path = Path(tempfile.gettempdir()) / f"hil-meldis-{name}.yaml"
    path.write_text(meshcat_params_yaml(plant, q))
    return path
