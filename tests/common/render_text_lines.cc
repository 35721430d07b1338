// SPDX-License-Identifier: Apache-2.0
// openbpu_render_text: renders text-line images for the PP-OCR text
// direction classifier (calibration data and test lines), with OpenCV's
// Hershey fonts, upright and rotated 180 degrees, preprocessed the way
// PaddleOCR's classifier does (resize to height 48 keeping the aspect ratio,
// right-pad to width 192).
//
//   openbpu_render_text --out DIR [--count N] [--seed S] [--rotate mixed|upright|flipped]
//                       [--png] [--labels FILE] [--height 48] [--width 192]
//
// Writes DIR/<i>.bgr (raw uint8 BGR NCHW 1x3xHxW, numpy.tofile layout, the
// calibration format of input_type_train bgr), DIR/<i>.png with --png (the
// same preprocessed HxW image), and with --labels a file of "<i> <0|1>"
// lines (1 = rotated). DIR holds nothing else, so it can be a cal_data_dir.
//
// --pages renders HxW "document" images instead (for the PP-OCR text
// detector): several upright lines of various sizes on a shaded background,
// no resizing or padding; --labels then lists each line's box
// "<i> x0 y0 x1 y1" in page pixels.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

namespace {

const char* const kWords[] = {
    "invoice", "total", "amount", "date", "number", "customer", "address", "street", "OpenBPU", "model",
    "tensor",  "price", "quantity", "order", "delivery", "receipt", "payment", "balance", "account", "phone",
    "email",   "report", "station", "platform", "train", "ticket", "seat", "class", "coach", "gate",
    "Hello",   "World", "THE", "QUICK", "BROWN", "FOX", "jumps", "over", "lazy", "dog"};

std::string random_text(std::mt19937& rng) {
  std::uniform_int_distribution<int> nwords(1, 4), word(0, static_cast<int>(std::size(kWords)) - 1), kind(0, 3),
      digit(0, 9999);
  std::string s;
  const int n = nwords(rng);
  for (int i = 0; i < n; ++i) {
    if (!s.empty()) s += ' ';
    if (kind(rng) == 0)
      s += std::to_string(digit(rng));
    else
      s += kWords[word(rng)];
  }
  return s;
}

cv::Mat render(std::mt19937& rng) {
  static const int kFonts[] = {cv::FONT_HERSHEY_SIMPLEX, cv::FONT_HERSHEY_PLAIN,        cv::FONT_HERSHEY_DUPLEX,
                               cv::FONT_HERSHEY_COMPLEX, cv::FONT_HERSHEY_TRIPLEX,      cv::FONT_HERSHEY_COMPLEX_SMALL,
                               cv::FONT_HERSHEY_SCRIPT_SIMPLEX, cv::FONT_HERSHEY_SCRIPT_COMPLEX};
  std::uniform_int_distribution<int> font_pick(0, 7), italic(0, 3), thick(1, 3), bg(170, 255), fg(0, 90), noise(0, 12);
  std::uniform_real_distribution<double> scale(0.8, 1.6);
  const std::string text = random_text(rng);
  const int font = kFonts[font_pick(rng)] | (italic(rng) == 0 ? cv::FONT_ITALIC : 0);
  const double fs = scale(rng);
  const int t = thick(rng);
  int base = 0;
  const cv::Size sz = cv::getTextSize(text, font, fs, t, &base);
  const int pad = 6;
  cv::Mat img(sz.height + base + 2 * pad, sz.width + 2 * pad, CV_8UC3,
              cv::Scalar(bg(rng), bg(rng), bg(rng)));
  cv::putText(img, text, cv::Point(pad, pad + sz.height), font, fs, cv::Scalar(fg(rng), fg(rng), fg(rng)), t,
              cv::LINE_AA);
  cv::Mat n(img.size(), CV_8UC3);
  cv::randn(n, cv::Scalar::all(0), cv::Scalar::all(noise(rng)));
  cv::add(img, n, img, cv::noArray(), CV_8UC3);
  return img;
}

// PaddleOCR cls preprocessing up to (excluding) normalization.
cv::Mat preprocess(const cv::Mat& img, int h, int w) {
  const double ratio = static_cast<double>(img.cols) / img.rows;
  const int rw = std::min(w, static_cast<int>(std::ceil(h * ratio)));
  cv::Mat resized;
  cv::resize(img, resized, cv::Size(rw, h), 0, 0, cv::INTER_LINEAR);
  cv::Mat out(h, w, CV_8UC3, cv::Scalar(128, 128, 128));  // normalized value ~0
  resized.copyTo(out(cv::Rect(0, 0, rw, h)));
  return out;
}

// A page: light shaded background with noise and a few text lines.
cv::Mat render_page(std::mt19937& rng, int h, int w, std::vector<cv::Rect>* boxes) {
  std::uniform_int_distribution<int> bg(150, 250), shade(-60, 60), lines(3, 8);
  cv::Mat page(h, w, CV_8UC3);
  const int b0 = bg(rng), g0 = bg(rng), r0 = bg(rng), dx = shade(rng), dy = shade(rng);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const int d = (dx * x) / w + (dy * y) / h;
      page.at<cv::Vec3b>(y, x) = cv::Vec3b(cv::saturate_cast<uint8_t>(b0 + d), cv::saturate_cast<uint8_t>(g0 + d),
                                           cv::saturate_cast<uint8_t>(r0 + d));
    }
  static const int kFonts[] = {cv::FONT_HERSHEY_SIMPLEX, cv::FONT_HERSHEY_DUPLEX, cv::FONT_HERSHEY_COMPLEX,
                               cv::FONT_HERSHEY_TRIPLEX};
  std::uniform_int_distribution<int> font_pick(0, 3), thick(1, 2), fg(0, 80);
  std::uniform_real_distribution<double> scale(0.4, 1.0);
  const int n = lines(rng);
  for (int i = 0; i < n; ++i) {
    const std::string text = random_text(rng);
    const int font = kFonts[font_pick(rng)];
    const int t = thick(rng);
    double fs = scale(rng);
    int base = 0;
    cv::Size sz = cv::getTextSize(text, font, fs, t, &base);
    if (sz.width > w - 8) {
      fs *= (w - 8.0) / sz.width;
      sz = cv::getTextSize(text, font, fs, t, &base);
    }
    std::uniform_int_distribution<int> px(2, std::max(2, w - sz.width - 2)),
        py(sz.height + 2, std::max(sz.height + 2, h - base - 2));
    const cv::Point org(px(rng), py(rng));
    cv::putText(page, text, org, font, fs, cv::Scalar(fg(rng), fg(rng), fg(rng)), t, cv::LINE_AA);
    boxes->push_back(cv::Rect(org.x, org.y - sz.height, sz.width, sz.height + base));
  }
  cv::Mat noise(page.size(), CV_8UC3);
  cv::randn(noise, cv::Scalar::all(0), cv::Scalar::all(4));
  cv::add(page, noise, page, cv::noArray(), CV_8UC3);
  return page;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Renders text-line images for the PP-OCR direction classifier", "openbpu_render_text"};
  std::string out, rotate = "mixed", labels_path;
  int count = 100, height = 48, width = 192;
  unsigned seed = 1;
  bool png = false, pages = false;
  app.add_option("--out", out, "output directory")->required();
  app.add_option("--count", count, "number of lines")->check(CLI::Range(1, 100000));
  app.add_option("--seed", seed, "random seed");
  app.add_option("--rotate", rotate, "mixed, upright or flipped")->check(CLI::IsMember({"mixed", "upright", "flipped"}));
  app.add_option("--height", height, "model input height")->check(CLI::Range(8, 1024));
  app.add_option("--width", width, "model input width")->check(CLI::Range(8, 4096));
  app.add_flag("--pages", pages, "render pages of text lines (--height x --width) for the text detector");
  app.add_flag("--png", png, "also write the preprocessed images as PNG");
  app.add_option("--labels", labels_path, "write the orientation labels to this file");
  CLI11_PARSE(app, argc, argv);

  std::mt19937 rng(seed);
  std::ofstream labels;
  if (!labels_path.empty()) {
    labels.open(labels_path);
    if (!labels) {
      std::fprintf(stderr, "cannot write %s\n", labels_path.c_str());
      return 1;
    }
  }
  for (int i = 0; i < count; ++i) {
    char name[32];
    std::snprintf(name, sizeof(name), "%05d", i);
    cv::Mat img;
    if (pages) {
      std::vector<cv::Rect> boxes;
      img = render_page(rng, height, width, &boxes);
      if (labels.is_open())
        for (const cv::Rect& r : boxes)
          labels << name << " " << r.x << " " << r.y << " " << r.x + r.width << " " << r.y + r.height << "\n";
    } else {
      cv::Mat line = render(rng);
      const bool flipped = rotate == "flipped" || (rotate == "mixed" && i % 2 == 1);
      if (flipped) cv::rotate(line, line, cv::ROTATE_180);
      img = preprocess(line, height, width);
      if (labels.is_open()) labels << name << " " << (flipped ? 1 : 0) << "\n";
    }
    // BGR NCHW uint8
    std::vector<uint8_t> nchw(static_cast<size_t>(3 * height * width));
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
          nchw[static_cast<size_t>((c * height + y) * width + x)] = img.at<cv::Vec3b>(y, x)[c];
    std::ofstream f(out + "/" + name + ".bgr", std::ios::binary);
    if (!f) {
      std::fprintf(stderr, "cannot write to %s (does the directory exist?)\n", out.c_str());
      return 1;
    }
    f.write(reinterpret_cast<const char*>(nchw.data()), static_cast<std::streamsize>(nchw.size()));
    if (png) cv::imwrite(out + "/" + name + ".png", img);
  }
  return 0;
}
