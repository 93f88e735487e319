#include "harness/run/isolated_case.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "harness/core/error.h"
#include "harness/report/json_reader.h"
#include "harness/report/json_writer.h"
#include "harness/run/fatal_signal_report.h"
#include "harness/run/interrupt.h"

namespace nkbench {
namespace {

// What the child said before it ended, and how it ended.
struct ChildReport {
  std::optional<std::vector<ResultRow>> rows;  // sent when the case completed
  std::optional<std::size_t> backend;          // of the last stage announced; kNoBackend: the data
  CaseStage stage = CaseStage::PreparingData;
  ResultRow stage_row;                         // that backend's row as known then
  std::string fault;                           // what the child's signal handler could tell
  std::string error;                           // an exception that escaped the case
  int wait_status = 0;
  bool timed_out = false;
};

// Lines from the child: "stage INDEX STAGE ROW", "fault TEXT", "rows ROWS", "error TEXT".
void readLine(const std::string& line, ChildReport& report, const std::vector<std::size_t>& indices,
              const StageObserver& observe) {
  const std::size_t space = line.find(' ');
  const std::string kind = line.substr(0, space), rest = space == std::string::npos ? "" : line.substr(space + 1);
  if (kind == "stage") {
    std::size_t index = 0, stage = 0;
    int consumed = 0;
    long long signed_index = 0;
    if (std::sscanf(rest.c_str(), "%lld %zu %n", &signed_index, &stage, &consumed) != 2) return;
    index = signed_index < 0 ? kNoBackend : indices.at(static_cast<std::size_t>(signed_index));
    report.backend = index;
    report.stage = static_cast<CaseStage>(stage);
    report.stage_row = index == kNoBackend ? ResultRow{} : rowFromJson(nlohmann::json::parse(rest.substr(consumed)));
    observe(index, report.stage, report.stage_row);
  } else if (kind == "fault") {
    report.fault = rest;
  } else if (kind == "error") {
    report.error = rest;
  } else if (kind == "rows") {
    std::vector<ResultRow> rows;
    for (const nlohmann::json& row : nlohmann::json::parse(rest)) rows.push_back(rowFromJson(row));
    report.rows = std::move(rows);
  }
}

void writeAll(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) ::_exit(4);  // the parent is gone
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void runChild(int fd, const SuiteCase& c, const std::vector<Backend*>& backends,
                           const CaseSettings& settings) {
  // The parent decides when the run stops; the child finishes its case.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  reportFatalSignalsTo(fd);
  try {
    const std::vector<ResultRow> rows = runCase(c, backends, settings, [&](std::size_t b, CaseStage s, const ResultRow& row) {
      const long long index = b == kNoBackend ? -1 : static_cast<long long>(b);
      writeAll(fd, fmt::format("stage {} {} {}\n", index, static_cast<int>(s), toJson(row).dump()));
    });
    nlohmann::json list = nlohmann::json::array();
    for (const ResultRow& row : rows) list.push_back(toJson(row));
    writeAll(fd, "rows " + list.dump() + "\n");
    ::_exit(0);
  } catch (const std::exception& error) {
    std::string what = error.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    writeAll(fd, "error " + what + "\n");
    ::_exit(3);
  }
}

ChildReport runInChild(const SuiteCase& c, const std::vector<Backend*>& backends,
                       const std::vector<std::size_t>& indices, const CaseSettings& settings, double timeout_s,
                       const StageObserver& observe) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error(fmt::format("--isolate: cannot create a pipe: {}", std::strerror(errno)));
  // Buffered output would be written twice, once by each process.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) throw Error(fmt::format("--isolate: cannot fork: {}", std::strerror(errno)));
  if (child == 0) {
    ::close(fds[0]);
    runChild(fds[1], c, backends, settings);
  }
  ::close(fds[1]);
  setRunningChild(child);
  ChildReport report;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_s);
  std::string pending;
  char buffer[65536];
  for (;;) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        report.timed_out = true;
        ::kill(child, SIGKILL);
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    pollfd readable{fds[0], POLLIN, 0};
    const int ready = ::poll(&readable, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed the pipe: it ended
    pending.append(buffer, static_cast<std::size_t>(n));
    for (std::size_t end; (end = pending.find('\n')) != std::string::npos; pending.erase(0, end + 1))
      readLine(pending.substr(0, end), report, indices, observe);
  }
  ::close(fds[0]);
  while (::waitpid(child, &report.wait_status, 0) < 0 && errno == EINTR) {
  }
  setRunningChild(0);
  return report;
}

std::string howItEnded(const ChildReport& report, double timeout_s) {
  if (report.timed_out) return fmt::format("timed out after {:g} s (--case-timeout)", timeout_s);
  if (WIFSIGNALED(report.wait_status)) {
    const int signal = WTERMSIG(report.wait_status);
    return fmt::format("killed by {} ({})", sigabbrev_np(signal) ? fmt::format("SIG{}", sigabbrev_np(signal)) : "a signal",
                       strsignal(signal));
  }
  if (!report.error.empty()) return "failed: " + report.error;
  return fmt::format("exited with status {} without its rows", WEXITSTATUS(report.wait_status));
}

}  // namespace

std::vector<ResultRow> runCaseIsolated(const SuiteCase& c, const std::vector<Backend*>& backends,
                                       const CaseSettings& settings, const IsolationSettings& isolation,
                                       const StageObserver& observe) {
  std::vector<std::optional<ResultRow>> rows(backends.size());
  for (;;) {
    std::vector<std::size_t> indices;  // the backends still to run, by their index in `backends`
    std::vector<Backend*> remaining;
    for (std::size_t b = 0; b < backends.size(); ++b)
      if (!rows[b]) {
        indices.push_back(b);
        remaining.push_back(backends[b]);
      }
    if (remaining.empty()) break;
    const ChildReport report = runInChild(c, remaining, indices, settings, isolation.case_timeout_s, observe);
    if (report.rows && report.rows->size() == remaining.size()) {
      for (std::size_t i = 0; i < indices.size(); ++i) rows[indices[i]] = (*report.rows)[i];
      break;
    }
    const std::string ended = howItEnded(report, isolation.case_timeout_s);
    const std::string fault = report.fault.empty() ? "" : "; " + report.fault;
    if (!report.backend || *report.backend == kNoBackend) {
      // Before any backend ran: the case itself cannot run.
      for (std::size_t b : indices) {
        ResultRow row = blankRow(settings, c, backends[b]->name());
        row.status = VerifyStatus::Error;
        row.note = fmt::format("the case {} while preparing the data{}", ended, fault);
        rows[b] = std::move(row);
      }
      break;
    }
    // The backend at work when the child ended costs its row; the others run again.
    ResultRow row = report.stage_row;
    row.status = VerifyStatus::Error;
    row.note = fmt::format("{} while {}{}", ended, toString(report.stage), fault);
    rows[*report.backend] = std::move(row);
  }
  std::vector<ResultRow> ordered;
  for (std::optional<ResultRow>& row : rows) ordered.push_back(std::move(*row));
  return ordered;
}

}  // namespace nkbench
