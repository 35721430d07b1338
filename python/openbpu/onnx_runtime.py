# SPDX-License-Identifier: Apache-2.0
"""HB_ONNXRuntime: the vendor's x86 inference interface for the ONNX models
hb_mapper writes (original / optimized / calibrated float models and the
quantized model), run by OpenBPU's own executor. The quantized model's BPU
subgraphs run in the simulator's reference kernels: its outputs equal the
.bin's on the same input bytes.

    from openbpu import HB_ONNXRuntime
    sess = HB_ONNXRuntime(model_file="model_output/x_quantized_model.onnx")
    outputs = sess.run(sess.output_names, {sess.input_names[0]: image}, input_offset=128)
"""
import numpy as np

from ._openbpu import OnnxSession

_TYPE_NAMES = {
    np.dtype(np.float32): "tensor(float)", np.dtype(np.float64): "tensor(double)",
    np.dtype(np.float16): "tensor(float16)", np.dtype(np.int8): "tensor(int8)",
    np.dtype(np.uint8): "tensor(uint8)", np.dtype(np.int16): "tensor(int16)",
    np.dtype(np.uint16): "tensor(uint16)", np.dtype(np.int32): "tensor(int32)",
    np.dtype(np.uint32): "tensor(uint32)", np.dtype(np.int64): "tensor(int64)",
    np.dtype(np.uint64): "tensor(uint64)", np.dtype(np.bool_): "tensor(bool)",
}


class NodeArg:
    """A model input or output as onnxruntime describes it: name, shape, type.
    `dtype` is the numpy dtype; `native` tells that the value is stored like
    the .bin's tensor (quantized model inputs take the .bin input's bytes)."""

    def __init__(self, info):
        self.name = info["name"]
        self.shape = list(info["shape"])
        self.dtype = np.dtype(info["dtype"])
        self.type = _TYPE_NAMES.get(self.dtype, "tensor(%s)" % self.dtype.name)
        self.native = bool(info["native"])
        # Native values are stored like the .bin tensor (padded channels):
        # run() returns their valid part.
        self.valid_shape = list(info.get("valid_shape", self.shape))

    def __repr__(self):
        return "NodeArg(name='%s', type='%s', shape=%s)" % (self.name, self.type, self.shape)


def _convert(arg, data, offset):
    """Converts user data to the input's dtype where no information is lost
    (the vendor's rules): int8 inputs take int8 or uint8 (minus input_offset),
    uint8 inputs take uint8 or int8 (plus input_offset), float inputs take
    float32 as is and int8/uint8 minus input_offset."""
    a = np.asarray(data)
    want = arg.dtype
    if a.dtype == want:
        return a
    if a.dtype in (np.uint8, np.int8) and want in (np.dtype(np.int8), np.dtype(np.uint8)):
        shifted = a.astype(np.int32) + (offset if want == np.uint8 else -offset)
        info = np.iinfo(want)
        if shifted.size and (shifted.min() < info.min or shifted.max() > info.max):
            raise ValueError("input '%s': %s data with input_offset=%d does not fit the model's %s input"
                             % (arg.name, a.dtype, offset, want))
        return shifted.astype(want)
    if a.dtype in (np.uint8, np.int8) and want == np.float32:
        return a.astype(np.float32) - np.float32(offset)
    raise TypeError("input '%s': %s data cannot be converted to the model's %s input without loss; "
                    "convert it first" % (arg.name, a.dtype, want))


class HB_ONNXRuntime:
    """Runs an ONNX model from hb_mapper (or any ONNX model our executor
    supports). model_file: path, serialized bytes or an onnx.ModelProto."""

    def __init__(self, model_file=None, onnx_model=None):
        model = model_file if model_file is not None else onnx_model
        if model is None:
            raise ValueError("HB_ONNXRuntime needs model_file")
        if hasattr(model, "SerializeToString"):
            model = model.SerializeToString()
        self.session = OnnxSession(model)
        self._inputs = [NodeArg(i) for i in self.session.inputs()]
        self._outputs = [NodeArg(o) for o in self.session.outputs()]

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    @property
    def input_names(self):
        return [i.name for i in self._inputs]

    @property
    def output_names(self):
        return [o.name for o in self._outputs]

    @property
    def input_shapes(self):
        return [i.shape for i in self._inputs]

    @property
    def input_types(self):
        return [i.type for i in self._inputs]

    def run(self, output_names, input_info, input_offset=128):
        """Runs the model on input_info ({input name: array}) and returns the
        outputs listed in output_names (None: all, in model order). Image
        data (uint8) is shifted by input_offset into the models' int8 "_128"
        inputs; the quantized model takes the .bin input's bytes."""
        names = self.output_names if output_names is None else list(output_names)
        unknown = [n for n in names if n not in self.output_names]
        feed = {}
        for arg in self._inputs:
            if arg.name not in input_info:
                raise KeyError("no data for model input '%s' (inputs: %s)" % (arg.name, self.input_names))
            feed[arg.name] = np.ascontiguousarray(_convert(arg, input_info[arg.name], input_offset))
        extra = [k for k in input_info if k not in feed]
        if extra:
            raise KeyError("%s: not inputs of the model (inputs: %s)" % (extra, self.input_names))
        values = self.session.run(feed, keep=unknown)
        return [self._valid(n, values[n]) for n in names]

    def _valid(self, name, value):
        arg = next((o for o in self._outputs if o.name == name), None)
        if arg is None or not arg.native or list(value.shape) == arg.valid_shape or value.ndim != len(arg.valid_shape):
            return value
        return np.ascontiguousarray(value[tuple(slice(0, d) for d in arg.valid_shape)])

    def run_feature(self, output_names, input_info, input_offset=0):
        """run() for featuremap inputs (input_offset 0 by default)."""
        return self.run(output_names, input_info, input_offset=input_offset)
