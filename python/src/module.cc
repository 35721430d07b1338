// SPDX-License-Identifier: Apache-2.0
// The extension modules of the openbpu package: _openbpu (libdnn 1.x, the
// converter's ONNX executor, the hrt_server client) and _openbpu_ucp (the
// UCP generation's libdnn: .hbm models; the same dnn_binding.cc built with
// OPENBPU_HRT_UCP).
#include "bindings.h"
#include "openbpu/version.h"

#ifdef OPENBPU_HRT_UCP
PYBIND11_MODULE(_openbpu_ucp, m) {
  m.doc() = "OpenBPU native bindings: the UCP generation's libdnn (.hbm models)";
  m.attr("__version__") = OPENBPU_VERSION_STRING;
  openbpu::python::bind_dnn(m);
}
#else
PYBIND11_MODULE(_openbpu, m) {
  m.doc() = "OpenBPU native bindings: libdnn and the converter's ONNX executor";
  m.attr("__version__") = OPENBPU_VERSION_STRING;
  openbpu::python::bind_dnn(m);
  openbpu::python::bind_onnx(m);
  openbpu::python::bind_remote(m);
}
#endif
