// SPDX-License-Identifier: Apache-2.0
// hb_eval_preprocess -m MODEL -i IMAGE_DIR [-o OUTPUT_DIR] [-v VAL_TXT]:
// the image preprocessing of the evaluation scripts as a command
// (docs/hb_eval_preprocess.md). Each image is decoded, resized / cropped /
// letterboxed as the model's evaluation recipe says, converted to the
// model's runtime input type with the converter's conversion (the bytes
// hb_mapper infer feeds the quantized model) and written as <stem>.bin, the
// raw input hrt_model_exec --input_file and libdnn take.
#include <CLI/CLI.hpp>

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "converter/pipeline.h"
#include "converter/tools/infer_input.h"
#include "converter/tools/mapper_log.h"

namespace {

using namespace openbpu::cvt;

// How an evaluation script brings an image to the model's input size.
enum class Geometry {
  kShortSideCrop,  // resize the short side to `resize`, center crop h x w (ImageNet classifiers)
  kLetterbox,      // keep the aspect ratio inside h x w, pad with `pad` (YOLO detectors)
  kHeightPadRight, // resize to height h keeping the aspect (width ceil, at most w), pad right (PP-OCR cls)
  kStretch,        // resize to h x w
};

struct Recipe {
  const char* name;
  Geometry geometry;
  int h, w;
  int resize;  // kShortSideCrop: short side before the crop
  int pad;     // kLetterbox, kHeightPadRight: pad value (each channel)
  const char* type_rt;
  const char* about;
};

// The model table (hb_eval_preprocess --help lists it).
const Recipe kRecipes[] = {
    {"mobilenetv1", Geometry::kShortSideCrop, 224, 224, 256, 0, "nv12", "ImageNet: short side 256, center crop 224"},
    {"mobilenetv2", Geometry::kShortSideCrop, 224, 224, 256, 0, "nv12", "ImageNet: short side 256, center crop 224"},
    {"resnet18", Geometry::kShortSideCrop, 224, 224, 256, 0, "nv12", "ImageNet: short side 256, center crop 224"},
    {"resnet50", Geometry::kShortSideCrop, 224, 224, 256, 0, "nv12", "ImageNet: short side 256, center crop 224"},
    {"googlenet", Geometry::kShortSideCrop, 224, 224, 256, 0, "nv12", "ImageNet: short side 256, center crop 224"},
    {"efficientnet_lite0", Geometry::kShortSideCrop, 224, 224, 256, 0, "nv12",
     "ImageNet: short side 256, center crop 224"},
    {"yolov3", Geometry::kLetterbox, 416, 416, 0, 127, "nv12", "letterbox into 416x416, padding 127"},
    {"yolov5s", Geometry::kLetterbox, 672, 672, 0, 127, "nv12", "letterbox into 672x672, padding 127"},
    {"ppocr_cls", Geometry::kHeightPadRight, 48, 192, 0, 128, "bgr",
     "PP-OCR direction classifier: height 48, width up to 192 keeping the aspect, padding 128 on the right"},
    {"unet", Geometry::kStretch, 1024, 2048, 0, 0, "nv12", "Cityscapes segmentation: resize to 1024x2048"},
};

const Recipe* find_recipe(const std::string& name) {
  for (const Recipe& r : kRecipes)
    if (name == r.name) return &r;
  return nullptr;
}

// The image brought to h x w (BGR, 8 bit) as the recipe says.
cv::Mat apply_geometry(const cv::Mat& img, const Recipe& r) {
  cv::Mat out;
  switch (r.geometry) {
    case Geometry::kShortSideCrop: {
      const double s = static_cast<double>(r.resize) / std::min(img.rows, img.cols);
      const int nh = std::max(r.h, static_cast<int>(img.rows * s + 0.5));
      const int nw = std::max(r.w, static_cast<int>(img.cols * s + 0.5));
      cv::Mat resized;
      cv::resize(img, resized, cv::Size(nw, nh), 0, 0, cv::INTER_LINEAR);
      out = resized(cv::Rect((nw - r.w) / 2, (nh - r.h) / 2, r.w, r.h)).clone();
      break;
    }
    case Geometry::kLetterbox: {
      const double s = std::min(static_cast<double>(r.h) / img.rows, static_cast<double>(r.w) / img.cols);
      const int nh = std::max(1, static_cast<int>(img.rows * s + 0.5));
      const int nw = std::max(1, static_cast<int>(img.cols * s + 0.5));
      cv::Mat resized;
      cv::resize(img, resized, cv::Size(nw, nh), 0, 0, cv::INTER_LINEAR);
      out = cv::Mat(r.h, r.w, CV_8UC3, cv::Scalar(r.pad, r.pad, r.pad));
      resized.copyTo(out(cv::Rect((r.w - nw) / 2, (r.h - nh) / 2, nw, nh)));
      break;
    }
    case Geometry::kHeightPadRight: {
      const int nw = std::min(r.w, std::max(1, static_cast<int>(std::ceil(img.cols * static_cast<double>(r.h) / img.rows))));
      cv::Mat resized;
      cv::resize(img, resized, cv::Size(nw, r.h), 0, 0, cv::INTER_LINEAR);
      out = cv::Mat(r.h, r.w, CV_8UC3, cv::Scalar(r.pad, r.pad, r.pad));
      resized.copyTo(out(cv::Rect(0, 0, nw, r.h)));
      break;
    }
    case Geometry::kStretch:
      cv::resize(img, out, cv::Size(r.w, r.h), 0, 0, cv::INTER_LINEAR);
      break;
  }
  return out;
}

// The runtime input bytes of a BGR image of the input's size (the
// converter's conversion: hb_mapper infer gives the quantized model the same).
bool to_runtime_bytes(const cv::Mat& bgr, const std::string& type_rt, const std::string& layout,
                      std::vector<uint8_t>* bytes, std::string* err) {
  InputParameter ip;
  ip.name = "image";
  ip.type_train = "bgr";
  ip.layout_train = "NCHW";
  ip.type_rt = type_rt;
  ip.layout_rt = type_rt == "nv12" ? "" : layout;
  ip.shape = {1, 3, bgr.rows, bgr.cols};
  std::vector<float> values(static_cast<size_t>(3 * bgr.rows * bgr.cols));
  for (int y = 0; y < bgr.rows; ++y)
    for (int x = 0; x < bgr.cols; ++x)
      for (int c = 0; c < 3; ++c)
        values[(static_cast<size_t>(c) * bgr.rows + y) * bgr.cols + x] = bgr.at<cv::Vec3b>(y, x)[c];
  return train_values_to_rt_bytes(ip, values, bytes, err);
}

bool is_dir(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Image file names of a folder (sorted), or of the first column of val_txt.
bool image_list(const std::string& dir, const std::string& val_txt, std::vector<std::string>* names,
                std::string* err) {
  if (!val_txt.empty()) {
    std::ifstream f(val_txt);
    if (!f) {
      *err = "cannot read --val_txt " + val_txt;
      return false;
    }
    for (std::string line; std::getline(f, line);) {
      const size_t b = line.find_first_not_of(" \t\r");
      if (b == std::string::npos) continue;
      names->push_back(line.substr(b, line.find_first_of(" \t\r", b) - b));
    }
    return true;
  }
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    *err = "cannot list the image folder " + dir;
    return false;
  }
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != ".." && is_image_file(n)) names->push_back(n);
  }
  ::closedir(d);
  std::sort(names->begin(), names->end());
  return true;
}

std::string stem(const std::string& name) {
  const size_t slash = name.find_last_of('/');
  const std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
  const size_t dot = base.rfind('.');
  return dot == std::string::npos ? base : base.substr(0, dot);
}

std::string recipe_help() {
  std::string s = "model name, one of:";
  for (const Recipe& r : kRecipes)
    s += std::string("\n  ") + r.name + " (" + std::to_string(r.h) + "x" + std::to_string(r.w) + " " + r.type_rt +
         "): " + r.about;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hb_eval_preprocess: preprocess evaluation images into model input files", "hb_eval_preprocess"};
  app.set_version_flag("--version", std::string(kMapperVersion));
  std::string model, image_dir, out_dir = "affected", val_txt, type_rt, layout = "NHWC";
  app.add_option("-m,--model_name", model, recipe_help())->required();
  app.add_option("-i,--image_dir", image_dir, "folder of the input images")->required();
  app.add_option("-o,--output_dir", out_dir, "output folder (created)")->capture_default_str();
  app.add_option("-v,--val_txt", val_txt, "file listing the images to process (first column), in order");
  app.add_option("-t,--input_type_rt", type_rt, "override the recipe's runtime type")
      ->check(CLI::IsMember({"nv12", "rgb", "bgr", "yuv444", "gray"}));
  app.add_option("--input_layout_rt", layout, "layout of rgb/bgr/yuv444/gray outputs")
      ->check(CLI::IsMember({"NHWC", "NCHW"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::unique_ptr<MapperLog> log(make_mapper_log("hb_eval_preprocess.log"));
  const Recipe* r = find_recipe(model);
  if (r == nullptr) {
    log->error("unknown --model_name '" + model + "' (hb_eval_preprocess --help lists the models)");
    return 1;
  }
  if (type_rt.empty()) type_rt = r->type_rt;
  if (!is_dir(image_dir)) {
    log->error("--image_dir " + image_dir + " is not a folder");
    return 1;
  }
  std::vector<std::string> names;
  std::string err;
  if (!image_list(image_dir, val_txt, &names, &err)) {
    log->error(err);
    return 1;
  }
  if (names.empty()) {
    log->error("no image to process in " + image_dir);
    return 1;
  }
  ::mkdir(out_dir.c_str(), 0755);
  if (!is_dir(out_dir)) {
    log->error("cannot create the output folder " + out_dir);
    return 1;
  }
  log->info(model + ": " + r->about + ", to " + type_rt + "; " + std::to_string(names.size()) + " image(s)");
  std::ofstream list(out_dir + "/image_info.txt");
  int done = 0;
  for (const std::string& n : names) {
    const cv::Mat img = cv::imread(image_dir + "/" + n, cv::IMREAD_COLOR);
    if (img.empty()) {
      log->error("cannot decode the image " + image_dir + "/" + n);
      return 1;
    }
    std::vector<uint8_t> bytes;
    if (!to_runtime_bytes(apply_geometry(img, *r), type_rt, layout, &bytes, &err)) {
      log->error(n + ": " + err);
      return 1;
    }
    const std::string file = stem(n) + ".bin";
    std::ofstream f(out_dir + "/" + file, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
      log->error("cannot write " + out_dir + "/" + file);
      return 1;
    }
    list << file << " " << img.rows << " " << img.cols << " " << r->h << " " << r->w << "\n";
    ++done;
  }
  log->info(std::to_string(done) + " file(s) written to " + out_dir + " (image_info.txt: file, original h w, input h w)");
  return 0;
}
