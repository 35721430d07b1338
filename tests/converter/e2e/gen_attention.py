# SPDX-License-Identifier: Apache-2.0
"""A small ViT-style network built in PyTorch for the converter's end-to-end
tests: a convolutional patch embedding, a pre-norm transformer block
(LayerNorm, multi-head self-attention with MatMul/Softmax/Transpose/Reshape,
MLP with exact GELU) and a ConvNeXt-style block (depthwise convolution,
channels-last LayerNorm, Linear layers with lower-rank biases), exported at
opset 13 so that LayerNorm and GELU arrive decomposed (ReduceMean/Sub/Pow/
Sqrt/Div, Div/Erf/Add/Mul), as PyTorch exports them for older opsets.

Random weights; the LayerNorm affine parameters and the residual scales get
realistic values (gamma around 1, beta around 0, layer scale 0.1..1).
"""
import numpy as np


def make_attention_model(path, seed=0):
    import torch
    import torch.nn as nn

    torch.manual_seed(seed)

    class Attention(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads, self.hd = heads, dim // heads
            self.qkv = nn.Linear(dim, dim * 3)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x):
            b, n, c = x.shape
            qkv = self.qkv(x).reshape(b, n, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            a = (q @ k.transpose(-2, -1)) * (self.hd ** -0.5)
            a = a.softmax(dim=-1)
            return self.proj((a @ v).transpose(1, 2).reshape(b, n, c))

    class Net(nn.Module):
        def __init__(self, dim=32, heads=2):
            super().__init__()
            self.embed = nn.Conv2d(3, dim, 4, stride=4)
            self.ln1 = nn.LayerNorm(dim)
            self.attn = Attention(dim, heads)
            self.ln2 = nn.LayerNorm(dim)
            self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))
            self.dw = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
            self.ln3 = nn.LayerNorm(dim)
            self.pw = nn.Sequential(nn.Linear(dim, dim * 4), nn.GELU(), nn.Linear(dim * 4, dim))
            self.gamma = nn.Parameter(torch.linspace(0.1, 1.0, dim))
            self.head = nn.Linear(dim, 10)

        def forward(self, x):
            x = self.embed(x)                       # [1, C, H, W]
            b, c, h, w = x.shape
            t = x.flatten(2).transpose(1, 2)        # [1, HW, C]
            t = t + self.attn(self.ln1(t))
            t = t + self.mlp(self.ln2(t))
            x = t.transpose(1, 2).reshape(b, c, h, w)
            y = self.dw(x).permute(0, 2, 3, 1)      # ConvNeXt block, channels last
            y = self.pw(self.ln3(y)) * self.gamma
            x = x + y.permute(0, 3, 1, 2)
            return self.head(x.mean((2, 3)))

    net = Net().eval()
    with torch.no_grad():
        for ln in (net.ln1, net.ln2, net.ln3):
            ln.weight.uniform_(0.7, 1.3)
            ln.bias.uniform_(-0.1, 0.1)
    x = torch.randn(1, 3, 32, 32)
    torch.onnx.export(net, x, path, opset_version=13, input_names=["input"], output_names=["logits"],
                      do_constant_folding=True)
