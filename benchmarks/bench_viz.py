"""Cost of the viewer bridge (viz) in a control tick, and of Drake's DrakeVisualizer for the same plant.

    python benchmarks/bench_viz.py [--repeats 15] [--calls 2000] [--json PATH]

Rows, for the iiwa14 and (if example-robot-data is installed) the ANYmal C, 46 links:
- tick between slots: ViewerBridge.tick when no message is due (what 59 of 60 ticks at 1 kHz cost);
- tick with a draw: every call publishes an lcmt_viewer_draw (clock advanced by one period per call);
- tick with load + draw: every call also republishes the cached lcmt_viewer_load_robot;
- draw encode: DrawPublisher.encode alone (poses, quaternions, in-place message);
- lcm-gen draw: the straightforward way, lcmt_viewer_draw filled from the facade's poses and encode();
- load message build + encode: once at start;
- 1 kHz loop, 60 Hz draws: mean cost per tick over simulated seconds of ticks;
- DrakeVisualizer: pydrake diagram ForcedPublish (SceneGraph poses + draw message), same LCM URL.
Median µs per call over `repeats` batches of `calls` calls; p99 from per-call timings (timer
overhead subtracted). Messages go to a ttl=0 multicast URL on a random port (a real send), or to
memq:// if multicast is not available.
"""
import logging
import statistics
import sysconfig
import time
from pathlib import Path

import lcm
import numpy as np
import record

from drivers.viz import DrawPublisher, ViewerBridge, VizConfig, draw_bodies, link_name, load_robot_message
from dynamics_cy import MultibodyPlant, Parser
from messages import lcmt_viewer_draw
from messages.channels import private_lcm_url

REPO = Path(__file__).resolve().parents[1]
ROBOT_DATA = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data"
MODELS = [("KUKA iiwa14 (configs/robots)", REPO / "configs" / "robots" / "iiwa14.urdf")]
if ROBOT_DATA.is_dir():
    MODELS.append(("ANYmal C, floating", ROBOT_DATA / "robots" / "anymal_c_simple_description/urdf/anymal.urdf"))


def add_model(parser, path):
    if ROBOT_DATA.is_dir():
        parser.package_map().Add("example-robot-data", str(ROBOT_DATA))
    parser.AddModels(str(path))


def lcm_url():
    url = private_lcm_url()
    try:
        sender, receiver = lcm.LCM(url), lcm.LCM(url)
        received = []
        receiver.subscribe("PROBE", lambda channel, data: received.append(data))
        sender.publish("PROBE", b"probe")
        if receiver.handle_timeout(500) and received:
            return url
    except (RuntimeError, OSError):
        pass
    return "memq://"


def timer_overhead_ns():
    samples = []
    for _ in range(20000):
        t0 = time.perf_counter_ns()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples)


def measure(function, calls, repeats, overhead_ns, drain=lambda: None):
    """(median µs per call over batches, p99 µs of single calls)."""
    for _ in range(calls // 10):
        function()
    batches, singles = [], []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            function()
        batches.append((time.perf_counter_ns() - t0) / calls)
        for _ in range(min(calls, 1000)):
            t0 = time.perf_counter_ns()
            function()
            singles.append(time.perf_counter_ns() - t0 - overhead_ns)
        drain()
    return statistics.median(batches) / 1e3, float(np.percentile(singles, 99)) / 1e3


def bench_model(label, path, calls, repeats, url, overhead_ns):
    plant = MultibodyPlant(0.0)
    add_model(Parser(plant), path)
    plant.Finalize()
    rng = np.random.default_rng(0)
    q = plant.GetDefaultPositions() + rng.normal(size=plant.num_positions()) * 0.3
    if plant.GetFloatingBaseBodies():
        q[:4] /= np.linalg.norm(q[:4])
    lc = lcm.LCM(url)

    def drain():                                   # memq:// keeps messages until handled
        while url == "memq://" and lc.handle_timeout(0):
            pass
    rows = {}
    config = VizConfig(draw_rate_hz=60.0, load_period_s=0, status_channel="")
    bridge = ViewerBridge(plant, lc, config=config)
    bridge.tick(0, q, 0)
    rows["tick between slots"] = measure(lambda: bridge.tick(1, q, 0), calls, repeats, overhead_ns)

    clock = iter(range(10**9, 10**18, round(1e9 / config.draw_rate_hz)))
    rows["tick with a draw"] = measure(lambda: bridge.tick(next(clock), q, 0), calls, repeats, overhead_ns, drain)

    def load_and_draw():
        bridge.request_load()
        bridge.tick(next(clock), q, 0)
    rows["tick with load + draw"] = measure(load_and_draw, calls // 10, repeats, overhead_ns, drain)

    publisher = DrawPublisher(plant, lc)
    rows["draw encode (DrawPublisher)"] = measure(lambda: publisher.encode(q, 0), calls, repeats, overhead_ns)

    bodies = draw_bodies(plant)
    names, robot_num = [link_name(plant, b) for b in bodies], [int(b.model_instance()) for b in bodies]
    context = plant.CreateDefaultContext()

    def lcm_gen_draw():
        plant.SetPositions(context, q)
        message = lcmt_viewer_draw()
        message.timestamp, message.num_links = 0, len(bodies)
        message.link_name, message.robot_num = names, robot_num
        for body in bodies:
            X_WB = plant.EvalBodyPoseInWorld(context, body)
            message.position.append(X_WB.translation().tolist())
            message.quaternion.append(X_WB.rotation().ToQuaternion().wxyz().tolist())
        return message.encode()
    rows["draw with lcm-gen (facade poses)"] = measure(lcm_gen_draw, max(1, calls // 20), repeats, overhead_ns)
    rows["load message build + encode"] = measure(lambda: load_robot_message(plant).encode(), 5, 3, overhead_ns)

    amortized = []
    for _ in range(repeats):                       # one second of 1 kHz ticks from a fresh start
        fresh = ViewerBridge(plant, lc, config=config)
        t0 = time.perf_counter_ns()
        for k in range(1000):
            fresh.tick(k * 1_000_000, q, 0)
        amortized.append((time.perf_counter_ns() - t0) / 1000 / 1e3)
        drain()
    rows["1 kHz loop, 60 Hz draws (mean per tick)"] = (statistics.median(amortized), float("nan"))

    drake = drake_visualizer(path, q, url, calls, repeats, overhead_ns)
    if drake:
        rows["DrakeVisualizer ForcedPublish (pydrake)"] = drake
    return f"{label}: {len(bodies)} links, {len(load_robot_message(plant).encode())} B load message, " \
           f"{len(publisher.tobytes())} B draw message", rows


def drake_visualizer(path, q, url, calls, repeats, overhead_ns):
    try:
        from pydrake.geometry import DrakeVisualizer
        from pydrake.lcm import DrakeLcm
        from pydrake.multibody.parsing import Parser as DrakeParser
        from pydrake.multibody.plant import AddMultibodyPlantSceneGraph
        from pydrake.systems.framework import DiagramBuilder
    except ImportError:
        return None
    logging.getLogger("drake").setLevel(logging.ERROR)
    builder = DiagramBuilder()
    plant, scene_graph = AddMultibodyPlantSceneGraph(builder, 0.0)
    add_model(DrakeParser(plant), path)
    plant.Finalize()
    drake_lcm = DrakeLcm(url)
    DrakeVisualizer.AddToBuilder(builder, scene_graph, drake_lcm)
    diagram = builder.Build()
    context = diagram.CreateDefaultContext()
    plant_context = plant.GetMyContextFromRoot(context)
    diagram.ForcedPublish(context)                  # the load message

    def publish():
        plant.SetPositions(plant_context, q)        # invalidates the poses, as a new state would
        diagram.ForcedPublish(context)
    return measure(publish, max(1, calls // 10), repeats, overhead_ns, lambda: drake_lcm.HandleSubscriptions(0))


def main(argv=None):
    parser = record.parser(__file__, __doc__)
    parser.add_argument("--repeats", type=int, default=15, help="batches per measurement (default 15)")
    parser.add_argument("--calls", type=int, default=2000, help="calls per batch (default 2000)")
    args = parser.parse_args(argv)
    logging.getLogger("dynamics_cy").setLevel(logging.ERROR)
    rec = record.Record(__file__, __doc__, args, "Viewer bridge", peers=("pydrake", "lcm", "example-robot-data"))
    url, overhead_ns = lcm_url(), timer_overhead_ns()
    for label, path in MODELS:
        title, rows = bench_model(label, path, args.calls, args.repeats, url, overhead_ns)
        table = rec.table(title, [record.Column("measurement", "{name}", align="left"),
                                  record.Column("median µs", "{median:.2f}"), record.Column("p99 µs", "{p99:.2f}")])
        for name, (median, p99) in rows.items():
            table.add(name=name, median=median, p99=p99)
        rec.show(table)
    rec.note(f"LCM {url}; perf_counter_ns overhead {overhead_ns:.0f} ns subtracted from single-call timings")
    rec.save()


if __name__ == "__main__":
    main()
