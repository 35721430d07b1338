// SPDX-License-Identifier: Apache-2.0
// Preprocess insertion at image inputs (see preprocess.cc).
#ifndef OPENBPU_CONVERTER_PASSES_PREPROCESS_H_
#define OPENBPU_CONVERTER_PASSES_PREPROCESS_H_

#include <string>
#include <vector>

#include "converter/ir/graph.h"

namespace openbpu::cvt {

struct PreprocessSpec {
  std::string input;
  std::string type_rt, layout_rt, type_train, layout_train, space_and_range = "regular";
  std::vector<float> mean, scale;  // empty when norm_type does not use them
};

// "yuv444" for nv12/yuv444 runtime inputs, else the runtime type itself; ""
// for featuremap.
std::string intermediate_family(const std::string& type_rt);

bool insert_preprocess(Graph* g, const std::vector<PreprocessSpec>& specs, std::string* error);

}  // namespace openbpu::cvt

#endif  // OPENBPU_CONVERTER_PASSES_PREPROCESS_H_
