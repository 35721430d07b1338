// SPDX-License-Identifier: Apache-2.0
// The ONNX backend node tests (and the pytorch-converted / pytorch-operator
// / simple model folders) on the CPU operator library.
//
//  * ExpectedCasesPass: every case listed in expected_pass.txt must pass
//    (regression guard); prints pass/fail/unsupported counts per folder and
//    the failing cases with the reason.
//  * NoUnlistedPasses: cases that pass but are not listed fail this test, so
//    the list grows with the library. OPENBPU_BACKEND_WRITE_LIST=<file>
//    writes the current list of passing cases there.
//  * OPENBPU_BACKEND_VERBOSE=1 prints every case's outcome.
//
// The data root is OPENBPU_ONNX_TESTDATA (CMake default: the libonnx-testdata
// package), overridable with the environment variable of the same name.
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/log.h"
#include "tests/onnx_backend/backend_runner.h"

namespace openbpu::backend_test {
namespace {

const char* const kFolders[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

std::string data_root() {
  if (const char* e = std::getenv("OPENBPU_ONNX_TESTDATA")) return e;
  return OPENBPU_ONNX_TESTDATA;
}

struct Suite {
  std::vector<CaseResult> results;
  bool found = false;
};

const Suite& suite() {
  static const Suite s = [] {
    Suite r;
    log::set_level(0);  // kernels log their errors; the report prints them
    const bool verbose = std::getenv("OPENBPU_BACKEND_VERBOSE") != nullptr;
    for (const char* folder : kFolders) {
      const std::string root = data_root() + "/" + folder;
      for (const auto& c : list_cases(root)) {
        r.found = true;
        CaseResult cr;
        try {
          cr = run_case(root + "/" + c, std::string(folder) + "/" + c);
        } catch (const std::exception& e) {
          cr.name = std::string(folder) + "/" + c;
          cr.outcome = Outcome::kFail;
          cr.message = std::string("exception: ") + e.what();
        }
        if (verbose)
          printf("%-12s %s  %s\n", outcome_name(cr.outcome), cr.name.c_str(), cr.message.c_str());
        r.results.push_back(std::move(cr));
      }
    }
    log::set_level(3);
    return r;
  }();
  return s;
}

std::set<std::string> expected_list() {
  std::set<std::string> names;
  std::ifstream f(OPENBPU_BACKEND_LIST);
  std::string line;
  while (std::getline(f, line)) {
    const size_t end = line.find_last_not_of(" \t\r");
    if (end == std::string::npos || line[0] == '#') continue;
    names.insert(line.substr(0, end + 1));
  }
  return names;
}

void print_counts(const Suite& s) {
  std::map<std::string, std::array<int, 3>> counts;
  for (const auto& r : s.results) {
    const std::string folder = r.name.substr(0, r.name.find('/'));
    counts[folder][static_cast<int>(r.outcome)]++;
  }
  for (const auto& [folder, c] : counts)
    printf("[backend] %-18s pass %4d  fail %4d  unsupported %4d  (of %d)\n", folder.c_str(), c[0],
           c[1], c[2], c[0] + c[1] + c[2]);
}

TEST(OnnxBackend, ExpectedCasesPass) {
  const Suite& s = suite();
  if (!s.found) GTEST_SKIP() << "no ONNX backend test data under " << data_root();
  print_counts(s);
  const std::set<std::string> expected = expected_list();
  ASSERT_FALSE(expected.empty()) << "cannot read " << OPENBPU_BACKEND_LIST;
  std::set<std::string> seen;
  int regressions = 0;
  for (const auto& r : s.results) {
    seen.insert(r.name);
    if (r.outcome == Outcome::kFail)
      printf("[backend] %s %s: %s\n", expected.count(r.name) ? "REGRESSION" : "fail",
             r.name.c_str(), r.message.c_str());
    if (expected.count(r.name) && r.outcome != Outcome::kPass) {
      ++regressions;
      ADD_FAILURE() << r.name << " is listed in expected_pass.txt but is "
                    << outcome_name(r.outcome) << ": " << r.message;
    }
  }
  for (const auto& n : expected)
    if (!seen.count(n))
      ADD_FAILURE() << n << " is listed in expected_pass.txt but the case does not exist";
  EXPECT_EQ(regressions, 0);
}

TEST(OnnxBackend, NoUnlistedPasses) {
  const Suite& s = suite();
  if (!s.found) GTEST_SKIP() << "no ONNX backend test data under " << data_root();
  const std::set<std::string> expected = expected_list();
  std::vector<std::string> passing, unlisted;
  for (const auto& r : s.results)
    if (r.outcome == Outcome::kPass) {
      passing.push_back(r.name);
      if (!expected.count(r.name)) unlisted.push_back(r.name);
    }
  if (const char* path = std::getenv("OPENBPU_BACKEND_WRITE_LIST")) {
    std::ofstream f(path);
    f << "# ONNX backend cases that pass on the CPU operator library (one per line).\n"
      << "# Regenerate: OPENBPU_BACKEND_WRITE_LIST=<this file> onnx_backend_test\n";
    for (const auto& n : passing) f << n << "\n";
    printf("[backend] wrote %zu passing cases to %s\n", passing.size(), path);
    return;
  }
  for (const auto& n : unlisted) printf("[backend] passes but is not listed: %s\n", n.c_str());
  EXPECT_TRUE(unlisted.empty())
      << unlisted.size()
      << " cases pass but are missing from expected_pass.txt; add them (see the log)";
}

}  // namespace
}  // namespace openbpu::backend_test
