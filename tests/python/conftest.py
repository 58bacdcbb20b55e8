"""Shared helpers of the Python module's tests: reference kernels written
independently of the module (numpy float64, rounded once to the storage
dtype), so that a pass is not the oracle agreeing with itself."""

import numpy as np


def bf16_bits(f32):
    """Round-to-nearest-even of float32 values to bfloat16, as uint16 bits."""
    bits = np.ascontiguousarray(f32, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def layer_norm_f64(x, gamma, beta, eps):
    """Two-pass LayerNorm in float64: y, mean, rstd."""
    x = np.asarray(x, dtype=np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (x - mean) * rstd * gamma + beta
    return y, mean[:, 0], rstd[:, 0]


def rms_norm_f64(x, gamma, eps):
    x = np.asarray(x, dtype=np.float64)
    rstd = 1.0 / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps)
    return x * rstd * gamma, rstd[:, 0]


def layer_norm_backward_f64(x, gamma, dy, eps):
    """dx, dgamma, dbeta of LayerNorm in float64."""
    x = np.asarray(x, dtype=np.float64)
    dy = np.asarray(dy, dtype=np.float64)
    mean = x.mean(axis=1, keepdims=True)
    rstd = 1.0 / np.sqrt(((x - mean) ** 2).mean(axis=1, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    g = dy * gamma
    dx = rstd * (g - g.mean(axis=1, keepdims=True) - xhat * (g * xhat).mean(axis=1, keepdims=True))
    return dx, (dy * xhat).sum(axis=0), dy.sum(axis=0)
