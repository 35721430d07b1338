# SPDX-License-Identifier: Apache-2.0
"""A float ONNX model as a torch.nn.Module, for timing PyTorch (float and FX
int8) on models that only exist as ONNX files (the PP-OCR models).

Only what those graphs use is covered: Conv, ConvTranspose,
BatchNormalization, Relu, Clip, HardSigmoid, Sigmoid, Add, Sub, Mul, Div,
GlobalAveragePool, MaxPool, AveragePool, Resize, Concat, MatMul, Softmax,
Reshape, Flatten, Transpose and the shape arithmetic in front of a Reshape
(Shape, Gather, Slice, Cast, Concat, Unsqueeze, ...), which is folded into
constants for the fixed input shape. Convolutions, batch norms, ReLUs and
pools become modules (so FX quantization fuses and quantizes them); the rest
are traceable torch functions. Semantics follow the ONNX operator
definitions for the attributes these models use; anything else raises.
"""
import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper, shape_inference


def _attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _fold(model, shape):
    """Constant tensors (initializers, Constant nodes, shape arithmetic) for an
    input of `shape`; returns (consts, static shapes)."""
    inp = model.graph.input[0]
    for d, v in zip(inp.type.tensor_type.shape.dim, shape):
        d.ClearField("dim_param")
        d.dim_value = v
    inferred = shape_inference.infer_shapes(model)
    shapes = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if dims and all(d > 0 for d in dims):
            shapes[vi.name] = dims
    consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for n in model.graph.node:
        a = _attrs(n)
        ins = list(n.input)
        if n.op_type == "Constant":
            consts[n.output[0]] = numpy_helper.to_array(a["value"])
        elif n.op_type == "Shape" and ins[0] in shapes:
            consts[n.output[0]] = np.array(shapes[ins[0]], dtype=np.int64)
        elif all((i in consts) or i == "" for i in ins) and ins:
            v = [consts.get(i) for i in ins]
            op = n.op_type
            if op == "Gather":
                r = np.take(v[0], v[1], axis=a.get("axis", 0))
            elif op == "Cast":
                r = v[0].astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]])
            elif op == "Concat":
                r = np.concatenate(v, axis=a["axis"])
            elif op == "Unsqueeze":
                axes = a.get("axes", v[1] if len(v) > 1 else None)
                r = np.expand_dims(v[0], tuple(int(x) for x in axes))
            elif op == "Slice":
                if "starts" in a:  # opset < 10: attributes
                    starts, ends = a["starts"], a["ends"]
                    axes, steps = a.get("axes", range(len(starts))), [1] * len(starts)
                else:
                    starts, ends = v[1], v[2]
                    axes = v[3] if len(v) > 3 and v[3] is not None else range(len(starts))
                    steps = v[4] if len(v) > 4 and v[4] is not None else [1] * len(starts)
                sl = [slice(None)] * v[0].ndim
                for s, e, ax, st in zip(starts, ends, axes, steps):
                    sl[int(ax)] = slice(int(s), int(e), int(st))
                r = v[0][tuple(sl)]
            elif op in ("Mul", "Add", "Sub", "Div"):
                f = {"Mul": np.multiply, "Add": np.add, "Sub": np.subtract,
                     "Div": np.floor_divide if v[0].dtype.kind == "i" else np.divide}[op]
                r = f(v[0], v[1])
            else:
                continue
            consts[n.output[0]] = np.asarray(r)
    return consts, shapes


class _ConstOp(nn.Module):
    def __init__(self, op, value, const_first):
        super().__init__()
        self.op, self.const_first = op, const_first
        self.register_buffer("value", value)

    def forward(self, x):
        a, b = (self.value, x) if self.const_first else (x, self.value)
        return {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul, "Div": torch.div}[self.op](a, b)


class OnnxModule(nn.Module):
    def __init__(self, model, shape):
        super().__init__()
        model = onnx.shape_inference.infer_shapes(model)
        consts, self.shapes = _fold(model, shape)
        self.input = model.graph.input[0].name
        self.output = model.graph.output[0].name
        self.mods = nn.ModuleDict()
        self.steps = []
        self.scalars = {}
        for i, n in enumerate(model.graph.node):
            if all(o in consts for o in n.output):
                continue
            self._add(i, n, consts)

    def _mod(self, i, m):
        key = "m%d" % i
        self.mods[key] = m
        return key

    def _add(self, i, n, consts):
        a = _attrs(n)
        op, ins, out = n.op_type, list(n.input), n.output[0]
        t = lambda name: torch.from_numpy(np.array(consts[name], dtype=np.float32))
        if op in ("Conv", "ConvTranspose"):
            w = t(ins[1])
            g = a.get("group", 1)
            k = list(w.shape[2:])
            pads = a.get("pads", [0] * 4)
            stride, dil = a.get("strides", [1, 1]), a.get("dilations", [1, 1])
            if op == "Conv":
                m = nn.Conv2d(w.shape[1] * g, w.shape[0], k, stride, 0, dil, g, len(ins) > 2)
            else:
                m = nn.ConvTranspose2d(w.shape[0], w.shape[1] * g, k, stride, pads[:2],
                                       a.get("output_padding", [0, 0]), g, len(ins) > 2, dil)
            m.weight.data.copy_(w)
            if len(ins) > 2:
                m.bias.data.copy_(t(ins[2]))
            pre = None
            if op == "Conv" and any(pads):
                pre = (pads[1], pads[3], pads[0], pads[2])
            self.steps.append(("pad_mod" if pre else "mod", self._mod(i, m), [ins[0]], out, pre))
        elif op == "BatchNormalization":
            m = nn.BatchNorm2d(consts[ins[1]].shape[0], eps=a.get("epsilon", 1e-5)).eval()
            m.weight.data.copy_(t(ins[1]))
            m.bias.data.copy_(t(ins[2]))
            m.running_mean.copy_(t(ins[3]))
            m.running_var.copy_(t(ins[4]))
            self.steps.append(("mod", self._mod(i, m), [ins[0]], out, None))
        elif op == "Relu":
            self.steps.append(("mod", self._mod(i, nn.ReLU()), [ins[0]], out, None))
        elif op == "Clip":
            lo = float(consts[ins[1]]) if len(ins) > 1 and ins[1] else a.get("min", None)
            hi = float(consts[ins[2]]) if len(ins) > 2 and ins[2] else a.get("max", None)
            if lo == 0.0 and hi == 6.0:
                self.steps.append(("mod", self._mod(i, nn.ReLU6()), [ins[0]], out, None))
            else:
                self.steps.append(("clamp", None, [ins[0]], out, (lo, hi)))
        elif op == "HardSigmoid":
            self.steps.append(("hardsigmoid", None, [ins[0]], out,
                               (a.get("alpha", 0.2), a.get("beta", 0.5))))
        elif op == "Sigmoid":
            self.steps.append(("sigmoid", None, [ins[0]], out, None))
        elif op in ("Add", "Sub", "Mul", "Div"):
            cst = [x in consts for x in ins]
            if cst[1] and consts[ins[1]].size == 1:
                c = float(consts[ins[1]])
                self.steps.append(("scalar", op, [ins[0]], out, c))
            elif cst[0] and consts[ins[0]].size == 1 and op in ("Add", "Mul"):
                self.steps.append(("scalar", op, [ins[1]], out, float(consts[ins[0]])))
            elif not any(cst):
                self.steps.append(("binary", op, ins, out, None))
            else:  # a constant tensor operand: a buffer of a small module
                k = 1 if cst[1] else 0
                m = _ConstOp(op, t(ins[k]), k == 0)
                self.steps.append(("mod", self._mod(i, m), [ins[1 - k]], out, None))
        elif op == "GlobalAveragePool":
            self.steps.append(("mod", self._mod(i, nn.AdaptiveAvgPool2d(1)), [ins[0]], out, None))
        elif op in ("MaxPool", "AveragePool"):
            k = a["kernel_shape"]
            pads = a.get("pads", [0] * 4)
            if pads[:2] != pads[2:]:
                raise NotImplementedError("asymmetric pool pads")
            cls = nn.MaxPool2d if op == "MaxPool" else nn.AvgPool2d
            m = cls(k, a.get("strides", k), pads[:2], ceil_mode=bool(a.get("ceil_mode", 0)))
            self.steps.append(("mod", self._mod(i, m), [ins[0]], out, None))
        elif op == "Resize":
            mode = a.get("mode", b"nearest").decode()
            sizes = consts.get(ins[3]) if len(ins) > 3 and ins[3] else None
            scales = consts.get(ins[2]) if len(ins) > 2 and ins[2] else None
            size = [int(s) for s in sizes[2:]] if sizes is not None and sizes.size else None
            sf = [float(s) for s in scales[2:]] if size is None else None
            self.steps.append(("resize", mode, [ins[0]], out, (size, sf)))
        elif op == "Concat":
            self.steps.append(("concat", None, ins, out, a["axis"]))
        elif op == "MatMul":
            w = t(ins[1])
            m = nn.Linear(w.shape[0], w.shape[1], bias=False)
            m.weight.data.copy_(w.t())
            self.steps.append(("mod", self._mod(i, m), [ins[0]], out, None))
        elif op == "Softmax":
            self.steps.append(("softmax", None, [ins[0]], out, a.get("axis", -1)))
        elif op == "Reshape":
            dims = [int(v) for v in consts[ins[1]]]
            src = self.shapes.get(ins[0])
            dims = [src[k] if d == 0 and src else d for k, d in enumerate(dims)]  # 0: keep
            self.steps.append(("reshape", None, [ins[0]], out, tuple(dims)))
        elif op == "Flatten":
            self.steps.append(("flatten", None, [ins[0]], out, a.get("axis", 1)))
        elif op == "Transpose":
            self.steps.append(("permute", None, [ins[0]], out, tuple(a["perm"])))
        else:
            raise NotImplementedError("ONNX operator %s" % op)

    def forward(self, x):
        env = {self.input: x}
        for kind, what, ins, out, arg in self.steps:
            v = [env[i] for i in ins]
            if kind == "mod":
                r = self.mods[what](v[0])
            elif kind == "pad_mod":
                r = self.mods[what](F.pad(v[0], arg))
            elif kind == "clamp":
                r = torch.clamp(v[0], arg[0], arg[1])
            elif kind == "hardsigmoid":
                r = torch.clamp(v[0] * arg[0] + arg[1], 0.0, 1.0)
            elif kind == "sigmoid":
                r = torch.sigmoid(v[0])
            elif kind == "scalar":
                r = {"Add": lambda: v[0] + arg, "Sub": lambda: v[0] - arg,
                     "Mul": lambda: v[0] * arg, "Div": lambda: v[0] * (1.0 / arg)}[what]()
            elif kind == "binary":
                r = {"Add": torch.add, "Sub": torch.sub, "Mul": torch.mul,
                     "Div": torch.div}[what](v[0], v[1])
            elif kind == "resize":
                mode = "bilinear" if what == "linear" else "nearest"
                r = F.interpolate(v[0], size=arg[0], scale_factor=arg[1], mode=mode)
            elif kind == "concat":
                r = torch.cat(v, dim=arg)
            elif kind == "softmax":
                r = torch.softmax(v[0], dim=arg)
            elif kind == "reshape":
                r = torch.reshape(v[0], arg)
            elif kind == "flatten":
                r = torch.flatten(v[0], arg)
            else:
                r = v[0].permute(*arg)
            env[out] = r
        return env[self.output]


def load(path, shape):
    return OnnxModule(onnx.load(path), shape).eval()
