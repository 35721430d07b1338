#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Exports the generated test models to ONNX (run with Debian's /usr/bin/python3).

torchvision mobilenet_v2 and resnet18, a small detector-like net with
upsampling and concatenation, and MobileNetV1 (the network of the reference
documents' RDK X3 timing figures, tests/tools: opset 13 so that its 4-D
Softmax stays one node, as in the vendor's Caffe model). No pretrained weights are available offline:
weights are random (fixed seed) and the BatchNorm statistics are the exact
statistics of real images (skimage's sample photos, exact_bn) so activations
keep a realistic range.

usage: export_models.py <output dir> [--opset N]
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torchvision


def sample_images(size):
    """Real photos from skimage's data package, resized, as float tensors in [0, 1]."""
    from skimage import data, transform
    names = ["astronaut", "chelsea", "coffee", "rocket", "immunohistochemistry", "hubble_deep_field"]
    imgs = []
    for n in names:
        im = getattr(data, n)()
        if im.ndim == 2:
            im = np.stack([im] * 3, axis=-1)
        im = transform.resize(im[..., :3], (size, size), anti_aliasing=True)
        imgs.append(torch.from_numpy(im.transpose(2, 0, 1).astype(np.float32)))
    return torch.stack(imgs)


def normalize(x):
    mean = torch.tensor([0.485, 0.456, 0.406], dtype=x.dtype).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], dtype=x.dtype).view(1, 3, 1, 1)
    return (x - mean) / std


class Detector(nn.Module):
    """A small FPN-like net: two strided stages, upsample + concat, two heads."""

    def __init__(self):
        super().__init__()
        def block(i, o, s):
            return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))
        self.stem = block(3, 16, 2)
        self.c2 = block(16, 32, 2)
        self.c3 = block(32, 64, 2)
        self.lat = nn.Conv2d(64, 32, 1)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.fuse = block(64, 32, 1)
        self.cls = nn.Conv2d(32, 6, 1)
        self.box = nn.Conv2d(32, 4, 1)

    def forward(self, x):
        x = self.stem(x)
        p2 = self.c2(x)
        p3 = self.c3(p2)
        t = self.up(self.lat(p3))
        f = self.fuse(torch.cat([t, p2], dim=1))
        return torch.sigmoid(self.cls(f)), self.box(f)


class MobileNetV1(nn.Module):
    """MobileNet v1, alpha 1.0: 13 depthwise-separable blocks, global average
    pool, the classifier as a 1x1 convolution (fc7) and a Softmax over the
    4-D output."""

    def __init__(self, classes=1000):
        super().__init__()

        def cbr(i, o, s, groups=1, k=3):
            return [nn.Conv2d(i, o, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(o),
                    nn.ReLU(inplace=True)]
        cfg = [(32, 64, 1), (64, 128, 2), (128, 128, 1), (128, 256, 2), (256, 256, 1), (256, 512, 2)] + \
            [(512, 512, 1)] * 5 + [(512, 1024, 2), (1024, 1024, 1)]
        layers = cbr(3, 32, 2)
        for i, o, s in cfg:
            layers += cbr(i, i, s, groups=i) + cbr(i, o, 1, k=1)
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc7 = nn.Conv2d(1024, classes, 1)

    def forward(self, x):
        return torch.softmax(self.fc7(self.pool(self.features(x))), dim=1)


def exact_bn(model, images):
    """BatchNorm statistics from the photos: each BatchNorm layer's running
    mean and variance become the exact mean and (biased) variance of its
    input over the photo batch, layer by layer in forward order, so that each
    layer sees its upstream layers already corrected (one eval-mode pass; a
    hook sets a layer's statistics just before it normalizes). Every channel
    then leaves its BatchNorm with mean beta and standard deviation about
    gamma on these photos, as in a trained network, where a momentum warm-up
    from (0, 1) left most of the initial statistics in place.

    Computed in float64 and rounded to float32 once: PyTorch's float32
    kernels sum in an order that depends on the CPU's vector ISA (AVX2 vs
    AVX-512 give different last bits), so float32 statistics would make the
    exported model, and every .bin digest recorded from it
    (tests/converter/e2e/bin_digests.txt), machine-dependent."""
    def set_stats(bn, inputs):
        x = inputs[0]
        bn.running_mean.copy_(x.mean(dim=(0, 2, 3)))
        bn.running_var.copy_(x.var(dim=(0, 2, 3), unbiased=False))

    model.double().eval()
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    hooks = [bn.register_forward_pre_hook(set_stats) for bn in bns]
    with torch.no_grad():
        model(normalize(images.double()))
    for h in hooks:
        h.remove()
    model.float()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--opset", type=int, default=11)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    images = sample_images(224)
    models = {
        "mobilenet_v2": torchvision.models.mobilenet_v2(),
        "resnet18": torchvision.models.resnet18(),
        "detector": Detector(),
        "mobilenet_v1": MobileNetV1(),
    }
    for name, model in models.items():
        size = 128 if name == "detector" else 224
        imgs = torch.nn.functional.interpolate(images.double(), size=(size, size), mode="bilinear",
                                               align_corners=False)
        exact_bn(model, imgs)
        x = torch.zeros(1, 3, size, size)
        out_names = {"detector": ["cls", "box"], "mobilenet_v1": ["prob"]}.get(name, ["logits"])
        opset = max(args.opset, 13) if name == "mobilenet_v1" else args.opset
        torch.onnx.export(model, x, os.path.join(args.out, name + ".onnx"), opset_version=opset,
                          input_names=["input"], output_names=out_names, do_constant_folding=True)
        print("exported", name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
