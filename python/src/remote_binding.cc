// SPDX-License-Identifier: Apache-2.0
// The hrt_server client for Python (the same client as hrt_model_exec
// --remote); openbpu.RemoteSession builds on it. The GIL is released while
// waiting for the network.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "hrt_server/client.h"

namespace py = pybind11;

namespace openbpu::python {

namespace {

class Remote {
 public:
  Remote(const std::string& host_port, const std::string& token_file, int timeout_s) {
    call([&] { return client_.connect(host_port, token_file, timeout_s, &info_); }, host_port + ": ");
  }

  py::dict info() const {
    py::dict d;
    d["protocol"] = info_.protocol;
    d["server_version"] = info_.server_version;
    d["dnn_version"] = info_.dnn_version;
    d["machine"] = info_.machine;
    d["system"] = info_.system;
    d["cpus"] = info_.cpus;
    d["sim_platform"] = info_.sim_platform;
    return d;
  }

  std::string upload_file(const std::string& path) {
    std::string sha;
    call([&] { return client_.upload_file(path, &sha); });
    return sha;
  }

  std::string upload_bytes(const py::bytes& data) {
    const std::string bytes = data;
    std::string sha;
    call([&] { return client_.upload_bytes(bytes, &sha); });
    return sha;
  }

  py::dict run(const std::string& mode, const std::vector<std::pair<std::string, std::string>>& options,
               const std::vector<std::string>& models, const std::vector<std::pair<std::string, std::string>>& inputs,
               bool profile, int wait_s, const std::vector<std::string>& model_names) {
    tools::RemoteRun r;
    r.mode = mode;
    r.options = options;
    r.models = models;
    r.model_names = model_names;
    r.inputs = inputs;
    r.profile = profile;
    r.wait_s = wait_s;
    tools::RemoteResult res;
    call([&] { return client_.run(r, &res); });
    py::dict d;
    d["exit_code"] = res.exit_code;
    d["stdout"] = res.out;
    d["stderr"] = res.err;
    py::list files;
    for (const tools::RemoteFile& f : res.files) files.append(py::make_tuple(f.kind, f.name, py::bytes(f.data)));
    d["files"] = files;
    return d;
  }

 private:
  // Runs one client call without the GIL; its failure is a RuntimeError.
  template <class Call>
  void call(Call&& f, const std::string& context = "") {
    bool ok = false;
    {
      py::gil_scoped_release release;
      ok = f();
    }
    if (!ok) throw std::runtime_error(context + client_.error());
  }

  tools::RemoteClient client_;
  tools::RemoteInfo info_;
};

}  // namespace

void bind_remote(py::module_& m) {
  py::class_<Remote>(m, "RemoteClient", "A connection to an hrt_server (docs/hrt_server.md).")
      .def(py::init<const std::string&, const std::string&, int>(), py::arg("remote"), py::arg("token_file"),
           py::arg("timeout_s") = 60)
      .def("info", &Remote::info)
      .def("upload_file", &Remote::upload_file, py::arg("path"))
      .def("upload_bytes", &Remote::upload_bytes, py::arg("data"))
      .def("run", &Remote::run, py::arg("mode"), py::arg("options"), py::arg("models"), py::arg("inputs"),
           py::arg("profile") = false, py::arg("wait_s") = 900, py::arg("model_names") = std::vector<std::string>(),
           "hrt_model_exec <mode> on the server. model_names: the models' file names (optional, one per model;\n"
           "the server keeps their extension: a .hbm runs on hrt_model_exec_ucp).");
}

}  // namespace openbpu::python
