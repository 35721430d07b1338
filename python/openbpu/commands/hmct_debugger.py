# SPDX-License-Identifier: Apache-2.0
"""hmct-debugger: the accuracy debugger's command line (the vendor's
subcommands and options; list values as Python literals, quoted or not:
-m ['cosine-similarity','mse'], -q [[Conv_2],[Conv_2,Conv_90]], -q a,b)."""
import argparse
import ast
import logging
import sys

from .. import debug as dbg
from ..debug.metrics import METRICS


def parse_value(text):
    """A literal (list, nested list, number, bool, string) or a bare list
    whose quotes the shell removed: [a,b], [[a],[a,b]], a,b."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    s = text.strip()
    if not s.startswith("["):
        return [t.strip() for t in s.split(",")] if "," in s else s
    pos = 0

    def parse_list():
        nonlocal pos
        assert s[pos] == "["
        pos += 1
        items = []
        while pos < len(s):
            c = s[pos]
            if c == "]":
                pos += 1
                return items
            if c in ", ":
                pos += 1
            elif c == "[":
                items.append(parse_list())
            else:
                end = pos
                while end < len(s) and s[end] not in ",]":
                    end += 1
                items.append(s[pos:end].strip().strip("'\""))
                pos = end
        raise argparse.ArgumentTypeError("unbalanced brackets in '%s'" % text)
    value = parse_list()
    if pos != len(s):
        raise argparse.ArgumentTypeError("unexpected text after the list in '%s'" % text)
    return value


def parse_bool(text):
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError("'%s' is not True or False" % text)


def metric_list(text):
    v = parse_value(text)
    for m in (v if isinstance(v, list) else [v]):
        if m not in METRICS:
            raise argparse.ArgumentTypeError("unknown metric '%s' (use %s)" % (m, ", ".join(METRICS)))
    return v


def metric(text):
    if text not in METRICS:
        raise argparse.ArgumentTypeError("unknown metric '%s' (use %s)" % (text, ", ".join(METRICS)))
    return text


def node_type(text):
    if text not in ("node", "weight", "activation"):
        raise argparse.ArgumentTypeError("node_type must be node, weight or activation")
    return text


def common(p):
    p.add_argument("model_or_file", metavar="MODEL_OR_FILE", help="the calibrated model (*_calibrated_model.onnx)")
    p.add_argument("calibrated_data", metavar="CALIBRATION_DATA",
                   help="calibration data folder (debug_mode: dump_calibration_data)")


def build_parser():
    ap = argparse.ArgumentParser(prog="hmct-debugger", description="OpenBPU accuracy debugger")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def add(name, help_text):
        p = sub.add_parser(name, help=help_text, aliases=[name.replace("-", "_")])
        common(p)
        p.set_defaults(command=name)
        return p

    p = add("get-sensitivity-of-nodes", "node quantization sensitivity")
    p.add_argument("-m", "--metrics", type=metric_list, default="cosine-similarity")
    p.add_argument("-o", "--output_node", default=None)
    p.add_argument("-n", "--node_type", type=node_type, default="node")
    p.add_argument("-d", "--data_num", type=int, default=None)
    p.add_argument("-v", "--verbose", type=parse_bool, default=False)
    p.add_argument("-i", "--interested_nodes", type=parse_value, default=None)
    p.add_argument("-s", "--save_dir", default=None, help="also write the table here")

    p = add("plot-acc-error", "cumulative error curves")
    p.add_argument("-s", "--save_dir", default=".")
    p.add_argument("-q", "--quantize_node", type=parse_value, default=None)
    p.add_argument("-nq", "--non_quantize_node", type=parse_value, default=None)
    p.add_argument("-m", "--metric", type=metric, default="cosine-similarity")
    p.add_argument("-a", "--average_mode", type=parse_bool, default=False)

    p = add("plot-distribution", "data distributions of nodes")
    p.add_argument("-s", "--save_dir", default=".")
    p.add_argument("-n", "--nodes_list", type=parse_value, required=True)

    p = add("get-channelwise-data-distribution", "per-channel box plots of calibration node inputs")
    p.add_argument("-s", "--save_dir", default=".")
    p.add_argument("-n", "--nodes_list", type=parse_value, required=True)
    p.add_argument("-a", "--axis", type=int, default=None)

    p = add("sensitivity-analysis", "single and partial quantization of the sensitive nodes")
    p.add_argument("-p", "--pick_threshold", type=float, default=0.999)
    p.add_argument("-d", "--data_num", type=int, default=1)
    p.add_argument("-sn", "--sensitive_nodes", type=parse_value, default=None)
    p.add_argument("-sd", "--save_dir", default=".")

    p = add("runall", "every analysis")
    p.add_argument("-s", "--save_dir", default="./debug_result")
    p.add_argument("-nm", "--ns_metrics", type=metric_list, default="cosine-similarity")
    p.add_argument("-o", "--output_node", default=None)
    p.add_argument("-nt", "--node_type", type=node_type, default=None)
    p.add_argument("-dn", "--data_num", type=int, default=None)
    p.add_argument("-v", "--verbose", type=parse_bool, default=False)
    p.add_argument("-i", "--interested_nodes", type=parse_value, default=None)
    p.add_argument("-dnl", "--dis_nodes_list", type=parse_value, default=None)
    p.add_argument("-cn", "--cw_nodes_list", type=parse_value, default=None)
    p.add_argument("-a", "--axis", type=int, default=None)
    p.add_argument("-qn", "--quantize_node", type=parse_value, default=None)
    p.add_argument("-nqn", "--non_quantize_node", type=parse_value, default=None)
    p.add_argument("-am", "--ae_metric", type=metric, default="cosine-similarity")
    p.add_argument("-avm", "--average_mode", type=parse_bool, default=False)
    p.add_argument("-pt", "--pick_threshold", type=float, default=0.999)
    p.add_argument("-sn", "--sensitive_nodes", type=parse_value, default=None)
    return ap


def run(args):
    a = vars(args).copy()
    cmd = a.pop("command")
    if cmd == "get-sensitivity-of-nodes":
        return dbg.get_sensitivity_of_nodes(**a)
    if cmd == "plot-acc-error":
        return dbg.plot_acc_error(**a)
    if cmd == "plot-distribution":
        return dbg.plot_distribution(**a)
    if cmd == "get-channelwise-data-distribution":
        return dbg.get_channelwise_data_distribution(**a)
    if cmd == "sensitivity-analysis":
        return dbg.sensitivity_analysis(**a)
    return dbg.runall(**a)


def main(argv=None):
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = build_parser().parse_args(argv)
    try:
        run(args)
    except (ValueError, KeyError, TypeError, OSError, RuntimeError) as e:
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print("hmct-debugger %s: error: %s" % (args.command, msg), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
