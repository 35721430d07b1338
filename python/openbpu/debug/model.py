# SPDX-License-Identifier: Apache-2.0
"""The calibrated model as the accuracy debugger sees it.

hb_mapper's *_calibrated_model.onnx is the float model with fake
quantization: a QuantizeLinear -> DequantizeLinear pair on every int8
activation the BPU computes and on every convolution weight (per output
channel). Each pair is a *calibration node*, named after its nodes
(`<value>_qdq<k>`; the names of its QuantizeLinear or DequantizeLinear
node are accepted too):

* a weight calibration node reads an initializer (the float weights);
* an activation calibration node reads an activation.

Every other node is a *regular node*. A regular node's quantization is what
the BPU quantizes when it runs the node: the weight calibration nodes it
reads and the activation calibration node of its output. An activation pair
belongs to the first node of the chain of single-input nodes that computes
its value without a quantization in between (a convolution followed by its
ReLU is one BPU operation: the pair after the ReLU belongs to the conv).

A variant of the model enables a subset of the calibration nodes; the others
are bypassed (their DequantizeLinear becomes an Identity of the float value).
With none enabled the model is the float model, with all the calibrated one.
"""
import collections
import os

import numpy as np
import onnx
from onnx import helper, numpy_helper

from .._openbpu import OnnxSession

Pair = collections.namedtuple("Pair", "name kind q dq input output scale axis owner")


def _base_name(q_node):
    n = q_node.name
    return n[:-len("_QuantizeLinear")] if n.endswith("_QuantizeLinear") else n


class CalibratedModel:
    def __init__(self, model_or_file):
        if isinstance(model_or_file, (str, os.PathLike)):
            self.path = str(model_or_file)
            self.model = onnx.load(self.path)
        elif isinstance(model_or_file, onnx.ModelProto):
            self.path = None
            self.model = model_or_file
        else:
            raise TypeError("model_or_file must be a path or an onnx.ModelProto, not %s" % type(model_or_file).__name__)
        g = self.model.graph
        self.initializers = {t.name: t for t in g.initializer}
        self.inputs = [i.name for i in g.input if i.name not in self.initializers]
        self.outputs = [o.name for o in g.output]
        self._producer = {o: n for n in g.node for o in n.output}
        self._consumers = collections.defaultdict(list)
        for n in g.node:
            for i in n.input:
                self._consumers[i].append(n)
        self._find_pairs()
        pair_nodes = {p.q.name for p in self.pairs.values()} | {p.dq.name for p in self.pairs.values()}
        self.regular = [n for n in g.node if n.name not in pair_nodes]  # topological order (as stored)
        self._assign_owners()
        self._sessions = collections.OrderedDict()

    # ---- structure --------------------------------------------------------

    def _find_pairs(self):
        self.pairs = collections.OrderedDict()
        self._alias = {}
        for q in self.model.graph.node:
            if q.op_type != "QuantizeLinear":
                continue
            readers = self._consumers.get(q.output[0], [])
            if len(readers) != 1 or readers[0].op_type != "DequantizeLinear":
                continue
            dq = readers[0]
            kind = "weight" if q.input[0] in self.initializers else "activation"
            scale = numpy_helper.to_array(self.initializers[q.input[1]]).astype(np.float64)
            axis = next((a.i for a in q.attribute if a.name == "axis"), 1)
            name = _base_name(q)
            self.pairs[name] = Pair(name, kind, q, dq, q.input[0], dq.output[0], scale, axis, None)
            for alias in (name, q.name, dq.name):
                self._alias[alias] = name

    def _data_inputs(self, node):
        return [i for i in node.input if i and i not in self.initializers]

    def _assign_owners(self):
        by_input = {p.input: p for p in self.pairs.values() if p.kind == "activation"}
        by_output = {p.output: p for p in self.pairs.values()}
        owners = {}
        for p in self.pairs.values():
            if p.kind == "weight":
                readers = self._consumers.get(p.output, [])
                owner = readers[0].name if len(readers) == 1 else None
            else:
                node = self._producer.get(p.input)
                while node is not None:
                    ins = self._data_inputs(node)
                    if len(ins) != 1 or ins[0] in by_output or ins[0] in by_input:
                        break
                    prev = self._producer.get(ins[0])
                    if prev is None or len(self._consumers.get(ins[0], [])) != 1 or prev.name not in self._regular_names():
                        break
                    node = prev
                owner = node.name if node is not None else None
            owners[p.name] = owner
        for name, owner in owners.items():
            self.pairs[name] = self.pairs[name]._replace(owner=owner)
        self.groups = collections.OrderedDict()
        for n in self.regular:
            group = [p for p, o in owners.items() if o == n.name]
            if group:
                self.groups[n.name] = group
        # Graph inputs' pairs (no producer) belong to the node reading them.
        for p in self.pairs.values():
            if p.owner is None and p.kind == "activation":
                readers = [r for r in self._consumers.get(p.output, []) if r.name in self._regular_names()]
                if len(readers) == 1:
                    self.groups.setdefault(readers[0].name, []).append(p.name)
                    self.pairs[p.name] = p._replace(owner=readers[0].name)

    def _regular_names(self):
        if not hasattr(self, "_regular_set"):
            self._regular_set = {n.name for n in self.regular}
        return self._regular_set

    def pair(self, name):
        """The calibration node called `name` (base, Quantize or Dequantize node name)."""
        if name not in self._alias:
            raise KeyError("'%s' is not a calibration node of the model" % name)
        return self.pairs[self._alias[name]]

    def is_pair(self, name):
        return name in self._alias

    def is_regular(self, name):
        return name in self._regular_names()

    def node(self, name):
        for n in self.regular:
            if n.name == name:
                return n
        raise KeyError("'%s' is not a node of the model" % name)

    def kind_of(self, name):
        if self.is_pair(name):
            return self.pair(name).kind
        if self.is_regular(name):
            return "node"
        raise KeyError("'%s' is not a node of the calibrated model" % name)

    def names(self, kind):
        """Candidates for node_type: regular nodes with a quantization, or calibration nodes of a kind."""
        if kind == "node":
            return list(self.groups)
        if kind in ("weight", "activation"):
            return [p.name for p in self.pairs.values() if p.kind == kind]
        raise ValueError("node_type must be 'node', 'weight' or 'activation', not '%s'" % kind)

    def group(self, name):
        """Calibration nodes quantizing `name` (a regular node's group or the pair itself)."""
        if self.is_pair(name):
            return {self.pair(name).name}
        if self.is_regular(name):
            return set(self.groups.get(name, []))
        if name in ("weight", "activation"):
            return set(self.names(name))
        raise KeyError("'%s' is not a node of the calibrated model" % name)

    def effective_output(self, node_name):
        """The value the rest of the model reads from a regular node: its first
        output, after its activation calibration node if it has one."""
        v = self.node(node_name).output[0]
        for p in self.pairs.values():
            if p.kind == "activation" and p.input == v:
                return p.output
        return v

    def initializer_array(self, name):
        return numpy_helper.to_array(self.initializers[name])

    def threshold(self, pair):
        return float(np.max(np.abs(pair.scale)) * 127.0)

    # ---- variants ---------------------------------------------------------

    def variant(self, enabled):
        """ModelProto with only the `enabled` calibration nodes active."""
        enabled = set(enabled)
        m = onnx.ModelProto()
        m.CopyFrom(self.model)
        nodes = []
        for n in m.graph.node:
            alias = self._alias.get(n.name)
            p = self.pairs[alias] if alias is not None and n.name in (self.pairs[alias].q.name, self.pairs[alias].dq.name) else None
            if p is None or p.name in enabled:
                nodes.append(n)
            elif n.name == p.dq.name:
                nodes.append(helper.make_node("Identity", [p.input], [p.output], name=n.name))
        del m.graph.node[:]
        m.graph.node.extend(nodes)
        return m

    def session(self, enabled):
        key = frozenset(enabled)
        if key not in self._sessions:
            if len(self._sessions) >= 8:
                self._sessions.popitem(last=False)
            self._sessions[key] = OnnxSession(self.variant(key).SerializeToString())
        self._sessions.move_to_end(key)
        return self._sessions[key]

    def run(self, enabled, samples, keep):
        """Runs the variant on every sample; returns one {value: array} per sample."""
        s = self.session(enabled)
        return [s.run(feed, keep=list(keep)) for feed in samples]

    def all_pairs(self):
        return set(self.pairs)


class CalibrationDataSet:
    """Calibration samples: {input name: [array, ...]} with the same count per
    input. From a directory as hb_mapper writes it with debug_mode
    dump_calibration_data (<input>/<i>.npy; a one-input model may also use a
    directory of .npy files), or from a dict."""

    def __init__(self, data, input_names):
        if isinstance(data, CalibrationDataSet):
            self.data = data.data
        elif isinstance(data, dict):
            self.data = {k: [np.asarray(a) for a in v] for k, v in data.items()}
        elif isinstance(data, (str, os.PathLike)):
            self.data = self._load_dir(str(data), input_names)
        else:
            raise TypeError("calibrated_data must be a directory, a dict or a CalibrationDataSet")
        missing = [n for n in input_names if n not in self.data]
        if missing:
            raise ValueError("calibration data has nothing for model input(s) %s" % missing)
        counts = {len(self.data[n]) for n in input_names}
        if len(counts) != 1 or 0 in counts:
            raise ValueError("calibration data: every input needs the same, non-zero number of samples")
        self.count = counts.pop()
        self.input_names = list(input_names)

    @staticmethod
    def _npy_files(d):
        files = [f for f in os.listdir(d) if f.endswith(".npy")]

        def key(f):
            stem = f[:-4]
            return (0, int(stem), f) if stem.isdigit() else (1, 0, f)
        return [os.path.join(d, f) for f in sorted(files, key=key)]

    def _load_dir(self, d, input_names):
        if not os.path.isdir(d):
            raise ValueError("calibration data directory '%s' does not exist" % d)
        out = {}
        for name in input_names:
            sub = os.path.join(d, name.replace("/", "_").replace("\\", "_"))
            if os.path.isdir(sub):
                out[name] = [np.load(f) for f in self._npy_files(sub)]
        if not out and len(input_names) == 1 and self._npy_files(d):
            out[input_names[0]] = [np.load(f) for f in self._npy_files(d)]
        return out

    def samples(self, data_num=None):
        if data_num is not None and (int(data_num) < 1 or int(data_num) > self.count):
            raise ValueError("data_num %s: must be in [1, %d] (the calibration samples)" % (data_num, self.count))
        n = self.count if data_num is None else int(data_num)
        return [{k: self.data[k][i] for k in self.input_names} for i in range(n)]
