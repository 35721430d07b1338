// SPDX-License-Identifier: Apache-2.0
// The files a conversion writes into working_dir (<prefix><suffix>, the
// calibration_data folder), staged in a hidden folder of working_dir and
// moved into place only when the whole run succeeded: a failing or killed run
// leaves the previous good run's files as they were.
#ifndef OPENBPU_CONVERTER_WRITER_OUTPUT_FILES_H_
#define OPENBPU_CONVERTER_WRITER_OUTPUT_FILES_H_

#include <string>

namespace openbpu::cvt {

class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  // Removes the staging folder (and whatever a failed run left in it).
  ~OutputFiles();

  // Creates working_dir and the staging folder <working_dir>/.<prefix>.partial.<pid>;
  // removes staging folders of the same prefix left by runs that were killed.
  bool open(const std::string& working_dir, const std::string& prefix, std::string* error);
  // Where to write <prefix><suffix> (inside the staging folder) and where it
  // ends up (for the log).
  std::string path(const std::string& suffix) const { return stage_ + "/" + prefix_ + suffix; }
  std::string final_path(const std::string& suffix) const { return dir_ + "/" + prefix_ + suffix; }
  // A folder of its own inside the staging folder (e.g. calibration_data),
  // replacing the folder of that name in working_dir on commit.
  std::string folder(const std::string& name) const { return stage_ + "/" + name; }
  // Moves everything staged into working_dir (replacing earlier files).
  bool commit(std::string* error);

 private:
  std::string dir_, prefix_, stage_;
};

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_WRITER_OUTPUT_FILES_H_
