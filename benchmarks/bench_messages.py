"""Encode/decode cost of iiwa status and command (7 joints): messages.codec vs. lcm-gen.

    python benchmarks/bench_messages.py [--batch 1000] [--repeats 200] [--json PATH]

Prints the median µs per call over `repeats` batches of `batch` calls
(time.perf_counter_ns). Each lcm-gen path does the same job as the codec:
encode from numpy arrays (fields set from the arrays, then encode()) and
decode into preallocated numpy arrays (decode(), then copy the fields in).
Columns: this package's generated classes and, if pydrake is installed,
Drake's (`from drake import ...`). Every row includes one Python call.
"""
import statistics
import time

import numpy as np
import record

import messages
from messages.codec import CommandDecoder, CommandEncoder, StatusDecoder, StatusEncoder

N = 7
STATUS_ARRAYS = ("joint_position_measured", "joint_velocity_estimated", "joint_position_commanded",
                 "joint_position_ipo", "joint_torque_measured", "joint_torque_commanded",
                 "joint_torque_external")


def median_us(function, batch, repeats):
    samples = []
    for _ in range(repeats):
        start = time.perf_counter_ns()
        for _ in range(batch):
            function()
        samples.append((time.perf_counter_ns() - start) / batch)
    return statistics.median(samples) / 1000.0


def lcm_gen_cases(types, q, tau, status_bytes, command_bytes):
    """The four operations done with lcm-gen classes `types` (a module or package)."""
    out = np.zeros((len(STATUS_ARRAYS), N))
    command_out = np.zeros((2, N))

    def status_encode():
        message = types.lcmt_iiwa_status()
        message.utime, message.num_joints = 1, N
        values = q.tolist()
        for name in STATUS_ARRAYS:
            setattr(message, name, values)
        return message.encode()

    def status_decode():
        message = types.lcmt_iiwa_status.decode(status_bytes)
        for row, name in enumerate(STATUS_ARRAYS):
            out[row] = getattr(message, name)

    def command_encode():
        message = types.lcmt_iiwa_command()
        message.utime, message.num_joints, message.num_torques = 1, N, N
        message.joint_position, message.joint_torque = q.tolist(), tau.tolist()
        return message.encode()

    def command_decode():
        message = types.lcmt_iiwa_command.decode(command_bytes)
        command_out[0] = message.joint_position
        command_out[1] = message.joint_torque

    return {"status encode": status_encode, "status decode": status_decode,
            "command encode": command_encode, "command decode": command_decode}


def main(argv=None):
    parser = record.parser(__file__, __doc__)
    parser.add_argument("--batch", type=int, default=1000, help="calls per timed batch (default: 1000)")
    parser.add_argument("--repeats", type=int, default=200,
                        help="timed batches; the table shows their median (default: 200)")
    args = parser.parse_args(argv)
    rec = record.Record(__file__, __doc__, args, "LCM codec", peers=("lcm", "pydrake"))

    q, tau = np.linspace(-1.0, 1.0, N), np.linspace(2.0, -2.0, N)
    status_encoder, status_decoder = StatusEncoder("iiwa", N), StatusDecoder("iiwa", N)
    command_encoder, command_decoder = CommandEncoder("iiwa", N), CommandDecoder("iiwa", N)
    status_bytes = status_encoder.encode_or_raise(1, q, q, q, q, q, q, position_ipo=q).tobytes()
    command_bytes = command_encoder.encode_or_raise(1, q, tau).tobytes()
    codec = {
        "status encode": lambda: status_encoder.encode(1, q, q, q, q, q, q, position_ipo=q),
        "status decode": lambda: status_decoder.decode(status_bytes),
        "command encode": lambda: command_encoder.encode(1, q, tau),
        "command decode": lambda: command_decoder.decode(command_bytes),
    }
    columns = {"messages.codec": codec,
               "lcm-gen (messages)": lcm_gen_cases(messages, q, tau, status_bytes, command_bytes)}
    try:
        import drake
        columns["lcm-gen (drake)"] = lcm_gen_cases(drake, q, tau, status_bytes, command_bytes)
    except ImportError:
        pass
    for name, column in columns.items():  # every path produces the same bytes
        if name != "messages.codec":
            assert column["status encode"]() == status_bytes, name
            assert column["command encode"]() == command_bytes, name

    results = {name: {op: median_us(function, args.batch, args.repeats)
                      for op, function in column.items()}
               for name, column in columns.items()}
    tick = {name: result["status decode"] + result["command encode"]
            for name, result in results.items()}

    keys = {"messages.codec": "codec", "lcm-gen (messages)": "lcmgen", "lcm-gen (drake)": "drake"}
    table = rec.table(f"iiwa, {N} joints: median µs per call over {args.repeats} batches of {args.batch}",
                      [record.Column("operation", "{operation}", align="left")]
                      + [record.Column(name, f"{{{keys[name]}:.3f}}") for name in columns]
                      + [record.Column("lcm-gen/codec", "{ratio:.0f}×")])
    rows = [(op, {name: result[op] for name, result in results.items()}) for op in codec]
    rows.append(("tick: status decode + command encode", tick))
    for op, values in rows:
        table.add(operation=op, **{keys[name]: v for name, v in values.items()},
                  ratio=values["lcm-gen (messages)"] / values["messages.codec"])
    rec.show(table)
    rec.save()


if __name__ == "__main__":
    main()
