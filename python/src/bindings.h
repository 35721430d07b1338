// SPDX-License-Identifier: Apache-2.0
// The _openbpu extension module of the openbpu Python package: the libdnn
// binding (dnn_binding.cc, public C API only, like any application) and the
// converter's executor for the intermediate ONNX models (onnx_binding.cc).
#ifndef OPENBPU_PYTHON_SRC_BINDINGS_H_
#define OPENBPU_PYTHON_SRC_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace openbpu::python {

void bind_dnn(pybind11::module_& m);
void bind_onnx(pybind11::module_& m);
void bind_remote(pybind11::module_& m);

}  // namespace openbpu::python

#endif  // OPENBPU_PYTHON_SRC_BINDINGS_H_
