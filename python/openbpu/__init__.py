# SPDX-License-Identifier: Apache-2.0
"""OpenBPU for Python.

* libdnn: ``load`` a .bin, read tensor properties, ``Model.infer`` on numpy
  arrays (quantize/dequantize helpers follow a tensor's quantization);
* ``HB_ONNXRuntime``: the ONNX models hb_mapper writes, run by the
  converter's executor (the quantized one bit-exact with the .bin);
* ``RemoteSession``: the same model run on a board's hrt_server;
* ``openbpu.debug``: the accuracy debugger (also the ``hmct-debugger``
  command).

A three-line evaluation loop::

    model = openbpu.load_model("model_output/x.bin")
    for image, label in dataset:
        scores = model.infer([image], dequantize=True)[0]
"""
from ._openbpu import (Model, OnnxSession, PackedModel, TensorProperties,  # noqa: F401
                       __version__, dequantize, dnn_version, quantize)
from .onnx_runtime import HB_ONNXRuntime, NodeArg  # noqa: F401
from .remote import RemoteError, RemoteSession  # noqa: F401


def load(*files):
    """Loads one or more .bin files (each may pack several models)."""
    flat = []
    for f in files:
        flat.extend(f if isinstance(f, (list, tuple)) else [f])
    return PackedModel([str(f) for f in flat])


def load_model(file, name=None):
    """The model `name` of a .bin file, or its only model."""
    pack = load(file)
    if name is None:
        if len(pack.model_names) != 1:
            raise ValueError("'%s' holds %d models %s: give name=" % (file, len(pack.model_names), pack.model_names))
        name = pack.model_names[0]
    return pack.model(name)
