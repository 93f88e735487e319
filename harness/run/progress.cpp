#include "harness/run/progress.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <iostream>

namespace nkbench {
namespace {

constexpr std::size_t kBarCells = 20;
constexpr std::size_t kDefaultWidth = 100;

std::string formatDuration(double seconds) {
  const auto total = static_cast<long>(std::lround(std::max(0.0, seconds)));
  if (total >= 3600) return fmt::format("{}h{:02}m", total / 3600, total % 3600 / 60);
  if (total >= 60) return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}s", total);
}

std::size_t terminalWidth() {
  winsize size{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 20) return size.ws_col;
  return kDefaultWidth;
}

}  // namespace

std::string formatProgressLine(std::size_t done, std::size_t total, const std::string& activity,
                               double elapsed_s, std::size_t width, double time_limit_s) {
  const std::size_t filled = total ? std::min(kBarCells, done * kBarCells / total) : kBarCells;
  // Cases cost about the same (fixed repetitions of a fixed minimum time), so
  // the time per finished case extrapolates.
  double left_s = time_limit_s - elapsed_s;
  if (done > 0) left_s = std::min(left_s, elapsed_s / double(done) * double(total - std::min(done, total)));
  const std::string eta = std::isfinite(left_s) ? formatDuration(left_s) + " left" : "ETA ?";
  std::string line = fmt::format("[{}{}] {}/{} ", std::string(filled, '#'), std::string(kBarCells - filled, '-'),
                                 done, total);
  const std::string tail = "  " + eta;
  if (line.size() + tail.size() < width) line += activity.substr(0, width - line.size() - tail.size());
  return (line + tail).substr(0, width);
}

ProgressBar::ProgressBar(std::size_t total_cases, bool enabled)
    : visible_(enabled && isatty(STDERR_FILENO)), total_(total_cases) {}

ProgressBar::~ProgressBar() { clear(); }

void ProgressBar::show(const std::string& activity) {
  activity_ = activity;
  if (!visible_) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::cerr << "\r\033[K" << formatProgressLine(done_, total_, activity_, elapsed, terminalWidth() - 1, time_limit_s_)
            << std::flush;
}

void ProgressBar::caseDone() {
  ++done_;
  show("");
}

void ProgressBar::dropSteps(std::size_t steps) {
  total_ -= std::min(steps, total_ - std::min(done_, total_));
  show(activity_);
}

void ProgressBar::message(const std::string& text) {
  clear();
  std::cerr << text << "\n";
  show(activity_);
}

void ProgressBar::clear() {
  if (visible_) std::cerr << "\r\033[K" << std::flush;
}

}  // namespace nkbench
