# SPDX-License-Identifier: Apache-2.0
"""torchvision ConvNeXt-tiny for the converter's end-to-end tests, with the
weights a trained network's activations look like (no pretrained weights can
be downloaded here), exported at opset 11 as the RDK X5 model zoo exports its
ConvNeXt models: LayerNorm and GELU arrive decomposed (ReduceMean/Sub/Pow/
Sqrt/Div/Mul/Add, Div/Erf/Add/Mul), the node names are those the zoo's
node_info entries use ("/features/features.5/features.5.3/block/block.2/
ReduceMean" for torchvision's module names).

Initialisation (numpy's generator: the same bytes on every machine):
  - Conv/Linear weights N(0, 1/fan_in), biases N(0, 0.1^2): every layer keeps
    the scale of its input, as after training;
  - LayerNorm gamma log-normal around 1 (0.5..2), beta N(0, 0.2^2), as trained
    ConvNeXts have (the stem's and the downsamples' norms included);
  - layer scale (the per-channel residual gain, 1e-6 at torchvision's init,
    0.05..1 and a few larger channels after training): |gamma| log-normal
    around 0.25, 15 % negative, and two channels per stage 4x larger, so the
    residual stream carries the outlier channels trained networks have.
Warm-up: one forward pass in float64 over photo crops (not the test's) in
which each block's branch (its second Linear) and each downsampling
convolution is rescaled to unit standard deviation on those photos before
the next layer sees it (forward hooks), and the classifier to logits of
standard deviation 3: activations keep the ranges above through the 18
blocks however the random weights fall. The scales are rounded to 3
significant digits, so the float32 weights do not depend on the CPU's vector
ISA (PyTorch's float64 sums do, in the last bits).
"""
import numpy as np


def _init(net, rng):
    import torch
    import torch.nn as nn

    def t(a):
        return torch.from_numpy(np.asarray(a, np.float64))

    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                w = m.weight
                fan_in = w[0].numel()
                w.copy_(t(rng.standard_normal(tuple(w.shape)) / np.sqrt(fan_in)))
                if m.bias is not None:
                    m.bias.copy_(t(rng.standard_normal(m.bias.shape[0]) * 0.1))
            elif isinstance(m, nn.LayerNorm):
                c = m.weight.shape[0]
                m.weight.copy_(t(np.clip(np.exp(rng.standard_normal(c) * 0.3), 0.5, 2.0)))
                m.bias.copy_(t(rng.standard_normal(c) * 0.2))
        for stage in net.features:
            outliers = None
            for blk in stage.modules():
                if not hasattr(blk, "layer_scale"):
                    continue
                c = blk.layer_scale.shape[0]
                if outliers is None:
                    outliers = rng.choice(c, 2, replace=False)
                g = np.clip(np.exp(np.log(0.25) + 0.8 * rng.standard_normal(c)), 0.02, 1.5)
                g *= np.where(rng.random(c) < 0.15, -1.0, 1.0)
                g[outliers] *= 4.0
                blk.layer_scale.copy_(t(g).reshape(c, 1, 1))


def _round3(x):
    return float("%.3g" % x)


def _warm_up(net, images):
    """One float64 pass: each hooked layer's output rescaled (weights and
    bias) to the target standard deviation before later layers see it."""
    import torch
    import torch.nn as nn
    from torchvision.ops.misc import Permute

    def scaler(target):
        def hook(mod, inp, out):
            s = _round3(target / float(out.std()))
            mod.weight.mul_(s)
            if mod.bias is not None:
                mod.bias.mul_(s)
            return out * s
        return hook

    handles = []
    for m in net.modules():
        if isinstance(m, nn.Sequential) and len(m) == 7 and isinstance(m[6], Permute):
            handles.append(m[5].register_forward_hook(scaler(1.0)))  # CNBlock branch
        elif isinstance(m, nn.Sequential) and len(m) == 2 and isinstance(m[1], nn.Conv2d):
            handles.append(m[1].register_forward_hook(scaler(1.0)))  # downsampling
    handles.append(net.classifier[2].register_forward_hook(scaler(3.0)))
    net.double().eval()
    with torch.no_grad():
        net(images.double())
    for h in handles:
        h.remove()
    net.float()


def make_convnext_model(path, size, photos, seed=0):
    """Writes ConvNeXt-tiny for input 1x3x<size>x<size> (a multiple of 32) to
    `path`; `photos(n, (h, w), seed)` gives uint8 HxWx3 RGB crops."""
    import torch
    import torchvision

    net = torchvision.models.convnext_tiny()
    _init(net, np.random.default_rng(seed))
    mean = np.array([123.675, 116.28, 103.53]).reshape(1, 3, 1, 1)
    std = np.array([58.395, 57.12, 57.375]).reshape(1, 3, 1, 1)
    imgs = np.stack([im.transpose(2, 0, 1) for im in photos(4, (size, size), 7)]).astype(np.float64)
    _warm_up(net, torch.from_numpy((imgs - mean) / std))
    x = torch.zeros(1, 3, size, size)
    torch.onnx.export(net, x, path, opset_version=11, input_names=["input"], output_names=["logits"],
                      do_constant_folding=True)


# The node_info of the RDK X5 model zoo's ConvNeXt yaml (demos/classification/
# ConvNeXt/yaml/ConvNeXt_atto.yaml: int16 on the BPU for the norm before the
# last downsampling, that convolution, a stage-3 block's depthwise
# convolution and residual Add, and a stage-4 block's variance mean), with
# torchvision's names for the same nodes (timm's stages.2 / stages.3 are
# torchvision's features.5 / features.6-7). "Div_mul" is the name the
# vendor's optimizer gives the norm's division; the source model has no such
# node.
ZOO_NODES = ["/features/features.6/features.6.0/Div_mul", "/features/features.6/features.6.0/Pow",
             "/features/features.6/features.6.1/Conv", "/features/features.6/features.6.0/ReduceMean",
             "/features/features.6/features.6.0/Sub", "/features/features.5/features.5.5/Add",
             "/features/features.5/features.5.5/block/block.0/Conv",
             "/features/features.7/features.7.1/block/block.2/ReduceMean_1"]


# What makertbin must log about those entries: the fused ones applied to the
# LayerNormalization (named after the Div), the types of values internal to
# it warned, the vendor-only name warned with the model's node it extends.
_LN6 = "/features/features.6/features.6.0/"
ZOO_LOG = [r"node_info ON: BPU '%sReduceMean': the optimizer merged this ReduceMean into LayerNormalization "
           r"'%sDiv'; the setting applies to it" % (_LN6, _LN6),
           r"node_info '%sReduceMean' InputType int16: applies to '%sTranspose_output_0', an input of "
           r"LayerNormalization '%sDiv'" % (_LN6, _LN6, _LN6),
           r"node_info '%sPow' OutputType int16: value '%sPow_output_0' is internal to LayerNormalization" % (_LN6, _LN6),
           r"node_info ON: BPU '%sDiv_mul': no such node in the model or among the nodes the optimizer merged \(the "
           r"model has '%sDiv', a LayerNormalization\); this setting has no effect" % (_LN6, _LN6)]


def zoo_yaml(text):
    """The e2e harness's yaml with the zoo's node_info (its dict syntax) and
    compiler keys; scale_value as the zoo writes it."""
    entries = ",\n".join("    \"%s\": {\n      'ON': 'BPU',\n      'InputType': 'int16',\n"
                         "      'OutputType': 'int16'\n    }" % n for n in ZOO_NODES)
    node_info = "  layer_out_dump: False\n  node_info: {\n%s\n  }\n" % entries
    text = text.replace("input_parameters:\n", node_info + "input_parameters:\n", 1)
    lines = [l for l in text.splitlines(True) if not l.startswith("  scale_value:")]
    text = "".join(lines).replace("  norm_type: 'data_mean_and_scale'\n", "  norm_type: 'data_mean_and_scale'\n"
                                  "  scale_value: 0.01712475 0.017507 0.01742919\n")
    return text.replace("compiler_parameters:\n", "compiler_parameters:\n  compile_mode: 'latency'\n  debug: False\n")
