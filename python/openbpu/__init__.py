# SPDX-License-Identifier: Apache-2.0
"""OpenBPU for Python.

* libdnn: ``load`` a .bin (libdnn 1.x) or a .hbm (the UCP generation), read
  tensor properties, ``Model.infer`` on numpy arrays (quantize/dequantize
  helpers follow a tensor's quantization);
* ``HB_ONNXRuntime``: the ONNX models hb_mapper / hb_compile write, run by
  the converter's executor (the quantized one bit-exact with the .bin);
* ``RemoteSession``: the same model run on a board's hrt_server;
* ``openbpu.debug``: the accuracy debugger (also the ``hmct-debugger``
  command).

A three-line evaluation loop::

    model = openbpu.load_model("model_output/x.bin")   # or x.hbm
    for image, label in dataset:
        scores = model.infer([image], dequantize=True)[0]
"""
import importlib

from ._openbpu import (Model, OnnxSession, PackedModel, TensorProperties,  # noqa: F401
                       __version__, dnn_version)
from .onnx_runtime import HB_ONNXRuntime, NodeArg  # noqa: F401
from .remote import RemoteError, RemoteSession  # noqa: F401


def is_hbm(file):
    """Whether a model file is of the UCP generation (.hbm), by its extension
    as hrt_model_exec decides."""
    return str(file).endswith(".hbm")


def native(hbm=False):
    """The extension module of a generation: _openbpu (libdnn 1.x, .bin) or
    _openbpu_ucp (the UCP generation's libdnn, .hbm), each with the same
    PackedModel / Model / TensorProperties / quantize / dequantize /
    dnn_version."""
    return importlib.import_module("._openbpu_ucp" if hbm else "._openbpu", __name__)


def load(*files):
    """Loads one or more model files (each may pack several models): all .bin
    (libdnn 1.x) or all .hbm (the UCP generation)."""
    flat = []
    for f in files:
        flat.extend(f if isinstance(f, (list, tuple)) else [f])
    flat = [str(f) for f in flat]
    kinds = {is_hbm(f) for f in flat}
    if len(kinds) > 1:
        raise ValueError(".bin and .hbm models run on different runtimes (libdnn 1.x, UCP): load them separately: %s"
                         % flat)
    return native(kinds == {True}).PackedModel(flat)


def load_model(file, name=None):
    """The model `name` of a .bin / .hbm file, or its only model."""
    pack = load(file)
    if name is None:
        if len(pack.model_names) != 1:
            raise ValueError("'%s' holds %d models %s: give name=" % (file, len(pack.model_names), pack.model_names))
        name = pack.model_names[0]
    return pack.model(name)


def _module_of(properties):
    return native(not isinstance(properties, TensorProperties))


def quantize(data, properties):
    """Float data to a tensor's integer type with its scales (round half away
    from zero, saturate): libdnn's Quantize."""
    return _module_of(properties).quantize(data, properties)


def dequantize(data, properties):
    """Integer data of a tensor's valid shape to float32 with its scale (and
    zero point / shift), as hrt_model_exec dumps it."""
    return _module_of(properties).dequantize(data, properties)
