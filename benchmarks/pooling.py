"""asv benchmarks: fastpool and its peers (onnxruntime, torch, numpy when installed).

Run ``asv run`` for history, or ``asv run --python=same --quick`` against the current
environment (what CI does, so that the suite cannot rot). A combination a peer cannot run
raises NotImplementedError in setup, which asv reports as skipped.
"""

import numpy as np

import fastpool
from fastpool import _bench

# Representative layers of the workload (python -m fastpool bench runs all of them).
CASES = {
    "resnet-stem": ((1, 64, 112, 112), dict(kernel_shape=[3, 3], strides=[2, 2],
                                            pads=[1, 1, 1, 1])),
    "vgg-2x2": ((1, 128, 112, 112), dict(kernel_shape=[2, 2], strides=[2, 2])),
    "inception-3x3-s1": ((1, 480, 13, 13), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
    "spp-13x13": ((1, 256, 13, 13), dict(kernel_shape=[13, 13], pads=[6, 6, 6, 6])),
    "audio-1d": ((1, 64, 16000), dict(kernel_shape=[4], strides=[2], pads=[1, 1])),
    "video-3d": ((1, 16, 32, 64, 64), dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2])),
}  # fmt: skip


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-100, 100, shape).astype(dtype)


class MaxPool:
    # the first call of a kernel in a new environment compiles it (up to a minute or two)
    timeout = 600
    params = (list(CASES), ["fastpool", "onnxruntime", "torch"], ["float32", "uint8"],
              ["NCHW", "NHWC"], [False, True])  # fmt: skip
    param_names = ["case", "peer", "dtype", "layout", "indices"]

    def setup(self, case, peer, dtype, layout, indices):
        shape, attrs = CASES[case]
        x = _data(shape, dtype)
        if peer == "fastpool":
            if layout == "NHWC":
                x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
            self.call = lambda: fastpool.max_pool(x, return_indices=indices, layout=layout,
                                                  **attrs)  # fmt: skip
        else:
            if layout == "NHWC":
                raise NotImplementedError("peers run NCHW")
            make = _bench._onnxruntime_call if peer == "onnxruntime" else _bench._torch_call
            self.call = make(_bench.Case(case, shape, attrs), x, indices)
            if self.call is None:
                raise NotImplementedError(f"{peer} cannot run this case or is not installed")
        self.call()

    def time_max_pool(self, *params):
        self.call()


class MaxPoolMemory:
    """Peak memory of a call: the input, the outputs and small scratch, no padded copy."""

    timeout = 600
    params = ([False, True],)
    param_names = ["indices"]

    def setup(self, indices):
        self.x = _data((8, 64, 112, 112), "float32")
        self.attrs = CASES["resnet-stem"][1]

    def peakmem_max_pool(self, indices):
        fastpool.max_pool(self.x, return_indices=indices, **self.attrs)


class GlobalPool:
    timeout = 600
    params = (["max", "lp"], ["fastpool", "numpy", "onnxruntime"], ["NCHW", "NHWC"])
    param_names = ["op", "peer", "layout"]

    def setup(self, op, peer, layout):
        x = _data((8, 512, 28, 28), "float32")
        if layout == "NHWC":
            if peer != "fastpool":
                raise NotImplementedError("peers run NCHW")
            x = np.ascontiguousarray(np.moveaxis(x, 1, -1))
        if peer == "fastpool":
            function = fastpool.global_max_pool if op == "max" else fastpool.global_lp_pool
            self.call = lambda: function(x, layout=layout)
        elif peer == "numpy":
            function = _bench.numpy_global_max if op == "max" else _bench.numpy_global_norm
            self.call = lambda: function(x)
        else:
            op_name = "GlobalMaxPool" if op == "max" else "GlobalLpPool"
            self.call = _bench.onnxruntime_session(op_name, {}, x)
            if self.call is None:
                raise NotImplementedError("onnxruntime is not installed")
        self.call()

    def time_global_pool(self, *params):
        self.call()
