// SPDX-License-Identifier: Apache-2.0
// hb_pack BIN_FILE... -o OUT: several .bin models in one file
// (docs/hb_pack.md). libdnn, hrt_model_exec (--model_name) and the model
// tools read packed files; a packed file is never packed again.
#include <CLI/CLI.hpp>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "converter/pipeline.h"
#include "converter/tools/mapper_log.h"
#include "converter/tools/model_file.h"
#include "schema/writer.h"

int main(int argc, char** argv) {
  using namespace openbpu::cvt;
  CLI::App app{"hb_pack: pack several .bin models into one file", "hb_pack"};
  app.set_version_flag("--version", std::string(kMapperVersion));
  std::vector<std::string> files;
  std::string out = "pack_model.bin";
  app.add_option("BIN_FILE", files, "the .bin models to pack")->required();
  app.add_option("-o,--output_name", out, "output name of the packed model")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::unique_ptr<MapperLog> log(make_mapper_log("hb_pack.log"));
  auto fail = [&](const std::string& msg) {
    log->error("exception in command: pack");
    log->error(msg);
    return 1;
  };
  log->info("Start pack models....");
  if (!has_model_suffix(out)) return fail("output name " + out + " must end in .bin");
  std::vector<std::vector<uint8_t>> bytes;
  std::set<std::string> names;
  std::string march;
  for (const std::string& f : files) {
    if (!has_model_suffix(f)) return fail("model " + f + " is not a bin model");
    LoadedFile lf;
    std::string err;
    if (!load_model_file(f, &lf, &err)) return fail(err);
    if (openbpu::model::is_packed(lf.file)) return fail("model: " + f + " is a packed model, it can not be packed again!");
    for (const auto& m : lf.file.models) {
      if (!names.insert(m->name).second)
        return fail("model name must be different !!! ('" + m->name + "' is in two of the files)");
      if (!march.empty() && m->march != march)
        return fail("model " + f + " is built for " + m->march + ", the others for " + march +
                    ": a packed file holds models of one march");
      march = m->march;
      log->info("model " + f + ": " + m->name + " (" + m->march + ")");
    }
    bytes.push_back(std::move(lf.bytes));
  }
  log->info("generate packed model");
  std::vector<uint8_t> packed;
  std::string err;
  if (!openbpu::model::pack_model_files(bytes, kMapperVersion, &packed, &err)) return fail(err);
  if (!openbpu::model::write_file_atomic(out, packed, &err)) return fail(err);
  log->info("packed model: " + out);
  log->info("pack models succeed!");
  return 0;
}
