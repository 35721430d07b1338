# SPDX-License-Identifier: Apache-2.0
"""The accuracy debugger's analyses (the vendor's horizon_nn.debug API; the
same functions back the hmct-debugger command). Every function takes the
calibrated model (path or onnx.ModelProto) and the calibration data
(directory written by debug_mode: dump_calibration_data, a dict or a
CalibrationDataSet); figures (PNG) and text tables go to save_dir."""
import collections
import logging
import math

import numpy as np

from . import metrics as M
from . import plots
from .model import CalibratedModel, CalibrationDataSet

log = logging.getLogger("openbpu.debug")


def _setup(model_or_file, calibrated_data):
    model = model_or_file if isinstance(model_or_file, CalibratedModel) else CalibratedModel(model_or_file)
    return model, CalibrationDataSet(calibrated_data, model.inputs)


def _as_list(v):
    if v is None:
        return None
    return [v] if isinstance(v, str) else list(v)


def _save_dir(save_dir):
    return "." if save_dir is None else str(save_dir)


def _targets(model, output_node):
    """Values compared: the model outputs, or an intermediate node's output."""
    if output_node is None:
        return list(model.outputs)
    if not model.is_regular(output_node):
        raise ValueError("output_node '%s' is not a regular node of the calibrated model" % output_node)
    return [model.effective_output(output_node)]


def _error(model, enabled, samples, targets, metric, reference):
    """Mean metric over the samples of the `targets` values (concatenated)."""
    runs = model.run(enabled, samples, targets)
    vals = []
    for ref, got in zip(reference, runs):
        a = np.concatenate([ref[t].ravel().astype(np.float64) for t in targets])
        b = np.concatenate([got[t].ravel().astype(np.float64) for t in targets])
        vals.append(M.compute(metric, a, b))
    return float(np.mean(vals))


def _reference(model, samples, keep):
    return model.run(set(), samples, keep)


def _fmt(v):
    return repr(float(v)) if math.isfinite(v) else str(v)


def _sensitivity_table(model, node_type, order, result, metric_list):
    if node_type == "weight":
        header = ["Weight", "Node"]
    elif node_type == "activation":
        header = ["Activation", "Node", "Threshold", "Bit"]
    else:
        header = ["Node"]
    rows = []
    for name in order:
        r = result[name]
        extra = [r[k] for k in ("node", "threshold", "bit") if k in r]
        rows.append([name] + extra + [r[m] for m in metric_list])
    return header + metric_list, rows


def get_sensitivity_of_nodes(model_or_file, metrics="cosine-similarity", calibrated_data=None, output_node=None,
                             node_type="node", data_num=None, verbose=False, interested_nodes=None, save_dir=None):
    """Quantization sensitivity: the error of the model output when only one
    node (a regular node with its weights and output activation, or one
    calibration node) is quantized and everything else runs in float.
    Returns {name: {metric: value as str, ...}} ordered worst first (by the
    first metric); weight/activation entries also give 'node' (and
    'threshold', 'bit'). verbose logs the table (logger 'openbpu.debug',
    INFO); save_dir also writes it as sensitivity_of_<node_type>.txt."""
    metric_list = [M.check_metric(m) for m in _as_list(metrics)]
    if not metric_list:
        raise ValueError("metrics is empty")
    if calibrated_data is None:
        raise ValueError("calibrated_data is required")
    model, data = _setup(model_or_file, calibrated_data)
    samples = data.samples(data_num)
    targets = _targets(model, output_node)
    interested = _as_list(interested_nodes)
    if interested:
        names = []
        for n in interested:
            model.kind_of(n)  # raises for unknown names
            names.append(model.pair(n).name if model.is_pair(n) else n)
    else:
        names = model.names(node_type)
    reference = _reference(model, samples, targets)
    result = {}
    for name in names:
        enabled = model.group(name)
        if not enabled:
            raise ValueError("node '%s' has no calibration node: nothing to quantize" % name)
        entry = collections.OrderedDict()
        if model.is_pair(name):
            p = model.pair(name)
            entry["node"] = p.owner or ""
            if p.kind == "activation":
                entry["threshold"] = _fmt(model.threshold(p))
                entry["bit"] = "8"
        for m in metric_list:
            entry[m] = _fmt(_error(model, enabled, samples, targets, m, reference))
        result[name] = entry
    key = M.worst_first_key(metric_list[0])
    order = sorted(result, key=lambda n: key(float(result[n][metric_list[0]])))
    ordered = collections.OrderedDict((n, result[n]) for n in order)
    kind = node_type if not interested else "interested"
    header, rows = _sensitivity_table(model, node_type if not interested else "node", order, ordered, metric_list)
    if verbose:
        widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
        line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
        log.info(("=" * 26 + kind + "=" * 26))
        log.info(line(header))
        log.info("-" * max(56, len(line(header))))
        for r in rows:
            log.info(line(r))
    if save_dir is not None:
        plots.write_table(save_dir, "sensitivity_of_%s.txt" % kind, header, rows)
    return ordered


def _configs(model, quantize_node, non_quantize_node):
    """(label, enabled calibration nodes) per curve of plot_acc_error."""
    if quantize_node is None and non_quantize_node is None:
        raise ValueError("quantize_node and non_quantize_node cannot both be None: give one of them")
    if quantize_node is not None and non_quantize_node is not None:
        raise ValueError("give quantize_node or non_quantize_node, not both")
    spec = _as_list(quantize_node if quantize_node is not None else non_quantize_node)
    if not spec:
        raise ValueError("the node list is empty")
    nested = all(isinstance(s, (list, tuple)) for s in spec)
    if not nested and any(isinstance(s, (list, tuple)) for s in spec):
        raise ValueError("give a list of names or a list of lists, not a mix")
    groups = []
    for i, s in enumerate(spec):
        names = list(s) if nested else [s]
        enabled = set()
        for n in names:
            enabled |= model.group(n)
        label = ("partial_qmodel_%d" % i) if nested else names[0]
        groups.append((label, enabled))
    if non_quantize_node is not None:
        groups = [(label, model.all_pairs() - e) for label, e in groups]
    return groups


def plot_acc_error(save_dir=None, calibrated_data=None, model_or_file=None, quantize_node=None,
                   non_quantize_node=None, metric="cosine-similarity", average_mode=False):
    """Cumulative error curves: for each configuration (quantize only the
    given nodes, or everything but them; nested lists quantize groups
    together; 'weight' / 'activation' stand for all weight / activation
    calibration nodes), the error of every regular node's output against the
    float model, in execution order. average_mode: the n-th point is the
    mean of the first n. Writes plot_acc_error.png and plot_acc_error.txt;
    returns {label: [(node, value), ...]}."""
    M.check_metric(metric)
    if model_or_file is None or calibrated_data is None:
        raise ValueError("model_or_file and calibrated_data are required")
    model, data = _setup(model_or_file, calibrated_data)
    samples = data.samples()
    nodes = [n.name for n in model.regular]
    values = [model.effective_output(n) for n in nodes]
    reference = _reference(model, samples, values)
    result = collections.OrderedDict()
    for label, enabled in _configs(model, quantize_node, non_quantize_node):
        runs = model.run(enabled, samples, values)
        curve = []
        for v in values:
            curve.append(float(np.mean([M.compute(metric, ref[v], got[v]) for ref, got in zip(reference, runs)])))
        if average_mode:
            curve = list(np.cumsum(curve) / np.arange(1, len(curve) + 1))
        result[label] = list(zip(nodes, curve))
    d = _save_dir(save_dir)
    plots.curves("accumulated error (%s%s)" % (metric, ", average" if average_mode else ""), metric, nodes,
                 {k: [v for _, v in c] for k, c in result.items()}, d, "plot_acc_error.png")
    plots.write_table(d, "plot_acc_error.txt", ["Node"] + list(result),
                      [[n] + [_fmt(result[k][i][1]) for k in result] for i, n in enumerate(nodes)])
    return result


def _nodes_setup(model_or_file, calibrated_data, nodes_list, save_dir):
    """(node names, model, every sample, save folder) of the per-node plots."""
    names = _as_list(nodes_list)
    if not names:
        raise ValueError("nodes_list is required")
    model, data = _setup(model_or_file, calibrated_data)
    return names, model, data.samples(), _save_dir(save_dir)


def _collect(runs, value):
    return np.concatenate([r[value].reshape((-1,) + r[value].shape[1:]) for r in runs], axis=0)


def plot_distribution(save_dir=None, model_or_file=None, calibrated_data=None, nodes_list=None):
    """Data distributions: a weight calibration node's float weights and
    their quantized copy; an activation calibration node's input data; a
    regular node's output in the float and the calibrated model and their
    difference. The blue triangle marks the largest absolute value, the red
    dashed lines the calibration threshold. One PNG per node
    (distribution_<node>.png); returns {node: file}."""
    names, model, samples, d = _nodes_setup(model_or_file, calibrated_data, nodes_list, save_dir)
    files = collections.OrderedDict()
    for name in names:
        kind = model.kind_of(name)
        out = "distribution_%s.png" % plots.file_name(name)
        if kind == "weight":
            p = model.pair(name)
            got = model.run(model.all_pairs(), samples[:1], [p.output])[0][p.output]
            w = np.asarray(model.initializer_array(p.input))
            files[name] = plots.histograms("weight %s (node %s)" % (p.name, p.owner),
                                           [("weight", [("float", w), ("calibrated", got)])], d, out,
                                           threshold=model.threshold(p))
        elif kind == "activation":
            p = model.pair(name)
            x = _collect(model.run(model.all_pairs(), samples, [p.input]), p.input)
            files[name] = plots.histograms("activation %s (node %s)" % (p.name, p.owner),
                                           [("input data", x)], d, out, threshold=model.threshold(p))
        else:
            v = model.effective_output(name)
            flt = _collect(model.run(set(), samples, [v]), v)
            cal = _collect(model.run(model.all_pairs(), samples, [v]), v)
            files[name] = plots.histograms("node %s output %s" % (name, v),
                                           [("float model", flt), ("calibrated model", cal), ("error", cal - flt)],
                                           d, out)
    return files


def get_channelwise_data_distribution(save_dir=None, model_or_file=None, calibrated_data=None, nodes_list=None,
                                      axis=None):
    """Box plots of the input data of calibration nodes per channel (axis:
    default the weight node's quantization axis, 1 for activations). One PNG
    per node (channelwise_<node>.png); returns {node: (file, per-channel
    arrays)}."""
    names, model, samples, d = _nodes_setup(model_or_file, calibrated_data, nodes_list, save_dir)
    out = collections.OrderedDict()
    for name in names:
        if not model.is_pair(name):
            raise ValueError("'%s' is not a calibration node (weight or activation)" % name)
        p = model.pair(name)
        if p.kind == "weight":
            x = np.asarray(model.initializer_array(p.input))
            ax = p.axis if axis is None else int(axis)
        else:
            x = _collect(model.run(model.all_pairs(), samples, [p.input]), p.input)
            ax = 1 if axis is None else int(axis)
        if not -x.ndim <= ax < x.ndim:
            raise ValueError("axis %d: the input data of '%s' has %d dimensions" % (ax, name, x.ndim))
        out[name] = plots.boxplot("%s %s input per channel" % (p.kind, p.name), x, ax % x.ndim, d,
                                  "channelwise_%s.png" % plots.file_name(p.name))
    return out


def sensitivity_analysis(model_or_file=None, calibrated_data=None, pick_threshold=0.999, data_num=1,
                         sensitive_nodes=None, save_dir=None):
    """For the sensitive nodes (given, or the regular nodes whose output
    cosine when quantized alone is below pick_threshold, worst first): the
    output cosine when only that node is quantized (green x) and when it and
    every node before it in the list run in float, the rest quantized (red
    line; 'none' = the calibrated model). Writes sensitivity_analysis.png and
    .txt; returns {node: {'single': cos, 'partial': cos}} plus 'none'."""
    model, data = _setup(model_or_file, calibrated_data)
    if sensitive_nodes is None:
        sens = get_sensitivity_of_nodes(model, "cosine-similarity", data, data_num=data_num)
        nodes = [n for n, r in sens.items() if float(r["cosine-similarity"]) < float(pick_threshold)]
    else:
        nodes = _as_list(sensitive_nodes)
        for n in nodes:
            model.kind_of(n)
    samples = data.samples(data_num)
    targets = list(model.outputs)
    reference = _reference(model, samples, targets)
    cos = "cosine-similarity"
    result = collections.OrderedDict()
    result["none"] = {"single": float("nan"),
                      "partial": _error(model, model.all_pairs(), samples, targets, cos, reference)}
    floated = set()
    for n in nodes:
        floated |= model.group(n)
        result[n] = {"single": _error(model, model.group(n), samples, targets, cos, reference),
                     "partial": _error(model, model.all_pairs() - floated, samples, targets, cos, reference)}
    d = _save_dir(save_dir)
    labels = list(result)
    plots.curves("sensitivity analysis (output cosine similarity)", cos, labels,
                 {"quantize this node only": [result[k]["single"] for k in labels],
                  "float up to this node": [result[k]["partial"] for k in labels]},
                 d, "sensitivity_analysis.png", baseline=1.0,
                 markers={"quantize this node only": "gx", "float up to this node": "r-"})
    plots.write_table(d, "sensitivity_analysis.txt", ["Node", "quantize this node only", "float up to this node"],
                      [[k, _fmt(result[k]["single"]), _fmt(result[k]["partial"])] for k in labels])
    return result


def runall(model_or_file=None, calibrated_data=None, save_dir="./debug_result", ns_metrics="cosine-similarity",
           output_node=None, node_type=None, data_num=None, verbose=False, interested_nodes=None,
           dis_nodes_list=None, cw_nodes_list=None, axis=None, quantize_node=None, non_quantize_node=None,
           ae_metric="cosine-similarity", average_mode=False, pick_threshold=0.999, sensitive_nodes=None):
    """Every analysis in one run (defaults as the vendor's runall):
    1-2. sensitivity of the weight and of the activation calibration nodes
         (node_type='node': of the regular nodes);
    3.   distributions of the top 5 of each (for nodes: their calibration nodes),
    4.   their channel-wise box plots,
    5.   cumulative error curves quantizing only weights / only activations,
    6.   sensitivity_analysis of the sensitive regular nodes.
    Returns a dict of every step's result."""
    model, data = _setup(model_or_file, calibrated_data)
    out = collections.OrderedDict()
    kinds = [node_type] if node_type is not None else ["weight", "activation"]
    top = []
    for kind in kinds:
        s = get_sensitivity_of_nodes(model, ns_metrics, data, output_node, kind, data_num, verbose,
                                     interested_nodes, save_dir=save_dir)
        out["sensitivity_" + kind] = s
        for name in list(s)[:5]:
            top.extend(sorted(model.group(name)) if kind == "node" else [name])
        if interested_nodes:
            break
    top = list(collections.OrderedDict.fromkeys(top))
    dis = _as_list(dis_nodes_list) or top
    cw = _as_list(cw_nodes_list) or [n for n in top if model.is_pair(n)]
    out["distribution"] = plot_distribution(save_dir, model, data, dis) if dis else {}
    out["channelwise"] = get_channelwise_data_distribution(save_dir, model, data, cw, axis) if cw else {}
    if quantize_node is None and non_quantize_node is None:
        quantize_node = ["weight", "activation"]
    out["acc_error"] = plot_acc_error(save_dir, data, model, quantize_node, non_quantize_node, ae_metric,
                                      average_mode)
    out["sensitivity_analysis"] = sensitivity_analysis(model, data, pick_threshold,
                                                       1 if data_num is None else data_num, sensitive_nodes, save_dir)
    return out
