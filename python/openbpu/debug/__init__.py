# SPDX-License-Identifier: Apache-2.0
"""The accuracy debugger (the vendor's ``horizon_nn.debug`` / hmct-debugger):
node quantization sensitivity, cumulative error curves, data and per-channel
distributions, sensitivity analysis, all on hb_mapper's calibrated model and
the calibration data it dumps with ``debug_mode: dump_calibration_data``::

    import openbpu.debug as dbg
    dbg.get_sensitivity_of_nodes(model_or_file="model_output/x_calibrated_model.onnx",
                                 metrics=["cosine-similarity", "mse"],
                                 calibrated_data="model_output/calibration_data", verbose=True)
"""
from .analysis import (get_channelwise_data_distribution, get_sensitivity_of_nodes,  # noqa: F401
                       plot_acc_error, plot_distribution, runall, sensitivity_analysis)
from .metrics import METRICS  # noqa: F401
from .model import CalibratedModel, CalibrationDataSet  # noqa: F401
