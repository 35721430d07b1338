// SPDX-License-Identifier: Apache-2.0
// The _openbpu extension module (imported by the openbpu package).
#include "bindings.h"
#include "openbpu/version.h"

PYBIND11_MODULE(_openbpu, m) {
  m.doc() = "OpenBPU native bindings: libdnn and the converter's ONNX executor";
  m.attr("__version__") = OPENBPU_VERSION_STRING;
  openbpu::python::bind_dnn(m);
  openbpu::python::bind_onnx(m);
  openbpu::python::bind_remote(m);
}
