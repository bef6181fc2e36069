"""`hil identify LOG [LOG ...]` and `hil run CONFIG --identify`: their options and handlers (hil.cli lists them)."""
from __future__ import annotations

from pathlib import Path

from drivers.core.schema import ConfigError

from .cli_table import Command, arg

OUT = arg("--out", metavar="FILE.yaml", help="identify: write the config fragment (robot.payload, "
                                             "controller.friction_compensation, sim) to this file")


def cmd_identify(args) -> int:
    """A payload's mass, centre of mass and inertia and the joints' friction from run logs.

    Reads each log's robot status (q, v, measured τ), filters it offline (zero-phase), fits the
    payload on --frame (default robot.end_effector) and each joint's viscous and Coulomb friction (or
    with --base the arm's base parameters), physically consistent (pseudo-inertia ⪰ 0; needs cvxpy:
    pip install 'hilstack[identify]'), and prints the estimates, their standard errors and the
    torque prediction RMS on held-out data; --out writes the config fragment the loop and the sim take
    (docs/identify.md). `hil run CONFIG --identify` runs the excitation in the simulated robot first."""
    from .cli import _load, _log, _reading
    from .identify import IdentifyOptions, identify
    check_outputs(args)
    cfg = _load(args.config, None) if args.config else None
    opts = IdentifyOptions(frame=args.frame, cutoff=args.cutoff, order=args.order, epsilon=args.epsilon,
                           v_min=args.v_min, holdout=args.holdout, base=args.base, consistent=not args.unconstrained,
                           torque_shift=args.torque_shift, solver=args.solver)
    for path in args.logs:
        _log(path)
    with _reading(args.logs[0]):
        result = identify(args.logs, opts, cfg)
    return report(result, args)


def run_and_identify(cfg, args) -> int:
    """`hil run CONFIG --identify` (hil.identify_run)."""
    from .identify_run import run_identify
    check_outputs(args)
    return report(run_identify(cfg, args.log, duration=args.duration), args)


def _outputs(args) -> list[tuple[str, str]]:
    return [(key, path) for key, path in (("--out", getattr(args, "out", None)), ("--plot", args.plot)) if path]


def check_outputs(args) -> None:
    """A ConfigError naming --out or --plot when it is a directory or its folder does not exist (before any work)."""
    for key, path in _outputs(args):
        if not Path(path).resolve().parent.is_dir():
            raise ConfigError(key, f"{path}: no such directory {str(Path(path).resolve().parent)!r}")
        if Path(path).is_dir():
            raise ConfigError(key, f"{path} is a directory, not a file")


def report(result: dict, args) -> int:
    """Writes the fragment (--out) and the plot (--plot) and prints the report (--json: as JSON)."""
    from .identify_report import format_identify, fragment_yaml, plot_identify, to_json
    write = {"--out": lambda path: Path(path).write_text(fragment_yaml(result)),
             "--plot": lambda path: plot_identify(result, path)}
    for key, path in _outputs(args):
        try:
            write[key](path)
        except (OSError, ValueError) as e:        # (matplotlib: ValueError for a format it has no writer of)
            raise ConfigError(key, f"{path}: cannot write it: {e}") from None
        result[key[2:]] = path
    print(to_json(result) if args.json else format_identify(result))
    return 0


IDENTIFY = Command("identify", cmd_identify, "LOG [LOG ...]", (
    arg("logs", nargs="+", metavar="LOG", help="LCM logs of the robot moving (hil run --log; an excitation)"),
    arg("--config", help="run config naming the robot and channels (default: the one stored in the log)"),
    arg("--frame", help="the payload's frame (default: robot.end_effector)"),
    arg("--cutoff", type=float, default=10.0, metavar="HZ", help="low-pass cutoff, Hz (default 10)"),
    arg("--order", type=int, default=4, help="Butterworth order (default 4)"),
    arg("--epsilon", type=float, default=0.01, metavar="RAD_S",
        help="width of the Coulomb friction's smooth sign tanh(v/ε), rad/s (default 0.01)"),
    arg("--v-min", type=float, default=0.05, metavar="RAD_S",
        help="rows of joints slower than this are left out, rad/s (default 0.05)"),
    arg("--holdout", type=float, default=0.25, metavar="SHARE",
        help="the last share of each log held out to measure the prediction (default 0.25)"),
    arg("--base", action="store_true", help="the whole arm's base parameters instead of a payload"),
    arg("--unconstrained", action="store_true",
        help="plain least squares, no physical-consistency constraint (no cvxpy needed)"),
    arg("--solver", choices=("clarabel", "scs"), default="clarabel",
        help="the consistent fit's conic solver (default clarabel)"),
    arg("--torque-shift", type=float, default=None, metavar="PERIODS",
        help="status periods the measured torque is moved earlier (default: 0.5 for a lockstep log, else 0; "
             "pass 0.5 for a log of the simulated robot in real time, hil demo / hil sim)"),
    OUT, arg("--plot", metavar="FILE.png", help="write the held-out torque prediction per joint to this PNG"),
    arg("--json", action="store_true", help="print the report as one JSON object")))
