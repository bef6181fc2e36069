"""What `hil identify` prints and writes: the report (text or JSON), the plot, and the config fragment
the loop and the sim take.

The fragment (--out FILE.yaml), to merge into a run config:

    robot:
      payload: {mass, com, inertia, frame}     # the controller's model carries it (gravity compensation,
                                               # the model-based laws): drivers.core.robot.attach_payload
    controller:
      friction_compensation: {viscous, coulomb, smoothing}   # the built-in laws add it (hil.controllers)
    sim:
      payload: {...}; joint_damping; joint_friction           # a simulated robot like the one identified

The payload's inertia is about its centre of mass, in F, as the config keys take it: [Ixx, Iyy, Izz,
Ixy, Ixz, Iyz] (dynamics_cy's RotationalInertia order).
"""
from __future__ import annotations

import json

import numpy as np

from drivers.core.robot import joint_label

SIGNIFICANT = 6     # digits of the fragment's numbers


def _num(x) -> float:
    return float(f"{float(x):.{SIGNIFICANT}g}")


def _list(a) -> list[float]:
    return [_num(x) for x in np.ravel(a)]


def inertia_entries(I) -> list[float]:
    """[Ixx, Iyy, Izz, Ixy, Ixz, Iyz] of a 3×3 inertia."""
    return _list([I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]])


def fragment(result: dict) -> dict:
    """The config fragment of an identification (the module's docstring)."""
    out = {}
    viscous, coulomb = _list(result["viscous"]), _list(result["coulomb"])
    eps = result["options"]["epsilon"]
    if "payload" in result:
        p = result["payload"]
        payload = {"mass": _num(p["mass"]), "com": _list(p["com"]), "inertia": inertia_entries(p["inertia"]),
                   "frame": result["frame"]}
        out["robot"] = {"payload": payload}
        out["sim"] = {"payload": dict(payload)}
    out["controller"] = {"friction_compensation": {"viscous": viscous, "coulomb": coulomb, "smoothing": eps}}
    out.setdefault("sim", {}).update({"joint_damping": viscous, "joint_friction": coulomb})
    return out


def fragment_yaml(result: dict) -> str:
    import yaml
    head = (f"# hil identify of {', '.join(result['logs'])}: merge into a run config (docs/identify.md).\n"
            "# robot.payload: the controller's model carries it; controller.friction_compensation: the built-in\n"
            "# laws add it; sim: a simulated robot like the one identified.\n")

    class Dumper(yaml.SafeDumper):        # no anchors and aliases: the run config's reader refuses aliases
        def ignore_aliases(self, data):
            return True
    return head + yaml.dump(fragment(result), Dumper=Dumper, sort_keys=False, default_flow_style=None, width=120)


def physically_valid(result: dict) -> bool | None:
    """Whether the payload estimate is a mass distribution (its pseudo-inertia PSD), None in the base mode."""
    if "payload" not in result:
        return None
    from .identify_fit import pseudo_inertia
    p = result["payload"]
    I = p["inertia_Fo"]
    pi = np.r_[p["mass"], p["mass"] * p["com"], I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]]
    return bool(np.linalg.eigvalsh(pseudo_inertia(pi)).min() >= -1e-9 * max(1.0, abs(p["mass"])))


def format_identify(result: dict) -> str:
    """The report as text."""
    o, s = result["options"], result["seconds"]
    f = lambda a, d=4: "[" + ", ".join(f"{x:.{d}g}" for x in np.ravel(a)) + "]"    # noqa: E731
    lines = [f"hil identify: {len(result['logs'])} log(s), {result['samples']} statuses; rows: {result['rows']} "
             f"fit, {result['rows_held_out']} held out (last {o['holdout']:.0%} of each log), "
             f"{result['rows_dropped']} dropped (|v| < {o['v_min']:g} rad/s or at the ends)",
             f"joints (the per-joint arrays' order): {', '.join(result.get('joint_names') or [])}",
             f"filter: zero-phase Butterworth order {o['order']} at {o['cutoff']:g} Hz; smooth sign ε = "
             f"{o['epsilon']:g} rad/s; " + ("physically consistent (pseudo-inertia ⪰ 0)" if o["consistent"]
                                           else "least squares")]
    if "payload" in result:
        p = result["payload"]
        lines += [f"payload on {result['frame']}:",
                  f"  mass     {p['mass']:.5g} kg  (± {p.get('mass_se', float('nan')):.2g})",
                  f"  com      {f(p['com'] * 1e3, 5)} mm  (± {f(p.get('com_se', np.full(3, np.nan)) * 1e3, 2)})",
                  f"  inertia  about the com, in F [Ixx Iyy Izz Ixy Ixz Iyz] {f(inertia_entries(p['inertia']))} kg·m²",
                  f"  physically valid: {physically_valid(result)}"]
    if "base" in result:
        b = result["base"]
        lines += [f"base parameters of the arm ({b['count']}, of {len(b['pi'])} over {len(b['bodies'])} bodies):",
                  f"  β (consistent) {f(b['beta'])}",
                  f"  β (LS)         {f(b['beta_ls'])}",
                  f"  ± (LS)         {f(b['beta_se'], 2)}"]
    lines += [f"friction per joint: viscous b_v {f(result['viscous'])} N·m·s/rad (± {f(result['viscous_se'], 2)})",
              f"                    Coulomb b_c {f(result['coulomb'])} N·m (± {f(result['coulomb_se'], 2)})",
              "held-out torque RMS per joint, N·m:"]
    if result["rms_model"] is not None:
        lines.append(f"  model alone       {f(result['rms_model'])}")
    lines += [f"  identified        {f(result['rms'])}",
              f"  (fit rows         {f(result['rms_fit'])})",
              f"time: read {s['read']:.2f} s, rows {s['rows']:.2f} s, fit {s['fit']:.2f} s, total {s['total']:.2f} s"]
    if "hold" in result:
        h = result["hold"]
        ended = [f"; ended in {state}" if state != "RUNNING" else "" for state in h.get("states", ("RUNNING",) * 2)]
        lines += [f"gravity-compensation hold, {h['seconds']:g} s from {f(h['q0'], 3)}: max drift per joint, mrad",
                  f"  without the payload  {f(np.array(h['without']) * 1e3)}  (max {max(h['without']) * 1e3:.4g}"
                  f"{ended[0]})",
                  f"  identified payload   {f(np.array(h['with']) * 1e3)}  (max {max(h['with']) * 1e3:.4g}{ended[1]})"]
    if result.get("out"):
        lines.append(f"config fragment: {result['out']}")
    if result.get("plot"):
        lines.append(f"plot: {result['plot']}")
    return "\n".join(lines)


def to_json(result: dict) -> str:
    """The report as one JSON object (the held-out traces and the robot config left out)."""
    def clean(x):
        if isinstance(x, dict):
            return {k: clean(v) for k, v in x.items() if k not in ("held_out", "robot")}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        if isinstance(x, np.ndarray):
            return clean(x.tolist())
        if isinstance(x, (np.floating, float)):
            return None if not np.isfinite(x) else float(x)
        if isinstance(x, np.integer):
            return int(x)
        return x
    return json.dumps(clean(result))


def plot_identify(result: dict, path: str) -> None:
    """One PNG: per joint, on the held-out rows, the torque the model alone lacks (τ̃ − ID, or τ̃ in the
    base mode) and the identified prediction."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    h, n = result["held_out"], result["joints"]
    fig, axes = plt.subplots(n, 1, figsize=(10, 2 * n), sharex=False, squeeze=False)
    for j in range(n):
        rows = h["joint"] == j
        ax = axes[j, 0]
        ax.plot(h["y"][rows], linewidth=0.8, label="measured")
        ax.plot(h["predicted"][rows], "--", linewidth=0.8, label="identified")
        ax.set_ylabel(f"{joint_label(result.get('joint_names'), j)} [N·m]")
        ax.legend(loc="upper right", fontsize=7)
    axes[-1, 0].set_xlabel("held-out sample (|v| >= v_min)")
    axes[0, 0].set_title("torque the model lacks (measured − model) and the identified prediction")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
