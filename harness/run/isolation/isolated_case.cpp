#include "harness/run/isolation/isolated_case.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/error.h"
#include "harness/host/omp_threads.h"
#include "harness/host/pinning.h"
#include "harness/report/json/json_reader.h"
#include "harness/report/json/json_writer.h"
#include "harness/run/isolation/fatal_signal_report.h"
#include "harness/run/interrupt.h"

namespace nkbench {
namespace {

// The runner's ends of the pipes of every live worker (one per thread count).
// A worker is a fork: it would inherit the other workers' ends and hold their
// request pipes open, so that they never see the end of their requests and
// the runner waits for them forever. Each new worker closes them first.
std::vector<int>& workerPipeEnds() {
  static std::vector<int> ends;
  return ends;
}

void closeWorkerPipeEnd(int fd) {
  auto& ends = workerPipeEnds();
  ends.erase(std::remove(ends.begin(), ends.end(), fd), ends.end());
  ::close(fd);
}

// JSON for the pipe: a note may quote bytes that are not UTF-8 (compiler
// output, a path); they become U+FFFD, as in the reports, instead of throwing.
std::string pipeJson(const nlohmann::json& json) { return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

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
  bool ready = false;                          // warmed up: the case's time starts
  bool warming_up = false;                     // timed out before a fresh worker was ready
};

// A fresh worker's warm-up (compilers, JIT, libraries, OpenMP) is timed apart
// from the case, at least this long, so that a short --case-timeout, meant to
// catch a hung kernel early, does not stop every worker before its first case.
constexpr double kLeastWarmUpLimitS = 60;
double warmUpLimitS(double case_timeout_s) { return std::max(case_timeout_s, kLeastWarmUpLimitS); }

// Lines from the child: "ready", "stage INDEX STAGE ROW", "fault TEXT", "rows ROWS", "error TEXT".
void readLine(const std::string& line, ChildReport& report, const std::vector<std::size_t>& indices,
              const StageObserver& observe) {
  const std::size_t space = line.find(' ');
  const std::string kind = line.substr(0, space), rest = space == std::string::npos ? "" : line.substr(space + 1);
  if (kind == "ready") {
    report.ready = true;
  } else if (kind == "stage") {
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

// Writes all of `text`; false when the other end is gone (errno says how).
bool writeFully(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The worker's writes to the runner.
void writeAll(int fd, const std::string& text) {
  if (!writeFully(fd, text)) ::_exit(4);  // the parent is gone
}

// A case request, one line: "case {...}" with the case and the indices of the
// backends to run it on.
std::string caseRequest(const SuiteCase& c, const std::vector<std::size_t>& indices) {
  const Problem& p = c.problem;
  const nlohmann::json request = {{"id", c.id},
                                  {"line", c.line},
                                  {"kind", toString(p.kind)},
                                  {"dtype", toString(p.dtype)},
                                  {"c_dtype", toString(p.c_dtype)},
                                  {"m", p.m},
                                  {"n", p.n},
                                  {"k", p.k},
                                  {"batch", p.batch},
                                  {"accumulate", p.accumulate},
                                  {"layers", p.mlp.widths},
                                  {"bias", p.mlp.bias},
                                  {"activation", toString(p.mlp.activation)},
                                  {"backends", indices}};
  return "case " + pipeJson(request) + "\n";
}

struct CaseRequest {
  SuiteCase c;
  std::vector<std::size_t> indices;
};

CaseRequest readCaseRequest(const std::string& line) {
  const nlohmann::json json = nlohmann::json::parse(line.substr(line.find(' ') + 1));
  CaseRequest request;
  request.c.id = json.at("id").get<std::string>();
  request.c.line = json.at("line").get<int>();
  Problem& p = request.c.problem;
  p.kind = parseOpKind(json.at("kind").get<std::string>()).value();
  p.dtype = parseDType(json.at("dtype").get<std::string>()).value();
  p.c_dtype = parseDType(json.at("c_dtype").get<std::string>()).value();
  p.m = json.at("m").get<std::int64_t>();
  p.n = json.at("n").get<std::int64_t>();
  p.k = json.at("k").get<std::int64_t>();
  p.batch = json.at("batch").get<std::int64_t>();
  p.accumulate = json.at("accumulate").get<bool>();
  p.mlp.widths = json.at("layers").get<std::vector<std::int64_t>>();
  p.mlp.bias = json.at("bias").get<bool>();
  p.mlp.activation = parseActivation(json.at("activation").get<std::string>()).value();
  request.indices = json.at("backends").get<std::vector<std::size_t>>();
  return request;
}

// The worker: case after case, until the runner closes its requests.
[[noreturn]] void runWorker(int requests, int reports, const std::vector<Backend*>& backends,
                            const CaseSettings& settings) {
  // The parent decides when the run stops; the worker finishes its case.
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGTERM, SIG_IGN);
  reportFatalSignalsTo(reports);
  try {
    placeOpenMpThreads(coresForThreads(settings.threads));
  } catch (const std::exception& error) {
    std::string what = error.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    writeAll(reports, "error " + what + "\n");
    ::_exit(3);
  }
  warmUpBackends(backends);
  writeAll(reports, "ready\n");
  std::string pending;
  char buffer[4096];
  for (;;) {
    std::size_t end;
    while ((end = pending.find('\n')) == std::string::npos) {
      const ssize_t n = ::read(requests, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ::_exit(0);  // no more cases
      pending.append(buffer, static_cast<std::size_t>(n));
    }
    const std::string line = pending.substr(0, end);
    pending.erase(0, end + 1);
    try {
      const CaseRequest request = readCaseRequest(line);
      std::vector<Backend*> chosen;
      for (std::size_t index : request.indices) chosen.push_back(backends.at(index));
      const std::vector<ResultRow> rows =
          runCase(request.c, chosen, settings, [&](std::size_t b, CaseStage s, const ResultRow& row) {
            const long long index = b == kNoBackend ? -1 : static_cast<long long>(b);
            writeAll(reports, fmt::format("stage {} {} {}\n", index, static_cast<int>(s), pipeJson(toJson(row))));
          });
      nlohmann::json list = nlohmann::json::array();
      for (const ResultRow& row : rows) list.push_back(toJson(row));
      writeAll(reports, "rows " + pipeJson(list) + "\n");
    } catch (const std::exception& error) {
      // Whatever escaped may have left the backends half done: a fresh worker takes the next case.
      std::string what = error.what();
      std::replace(what.begin(), what.end(), '\n', ' ');
      writeAll(reports, "error " + what + "\n");
      ::_exit(3);
    }
  }
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

struct IsolatedCases::Report : ChildReport {
  bool worker_ended = false;  // the worker died, was killed or gave up: the next case needs a new one
};

IsolatedCases::IsolatedCases(const std::vector<Backend*>& backends, const CaseSettings& settings,
                             IsolationSettings isolation)
    : backends_(backends), settings_(settings), isolation_(isolation) {}

IsolatedCases::~IsolatedCases() { stop(false); }

void IsolatedCases::start() {
  int requests[2], reports[2];
  if (::pipe(requests) != 0 || ::pipe(reports) != 0)
    throw Error(fmt::format("--isolate: cannot create a pipe: {}", std::strerror(errno)));
  // Buffered output would be written twice, once by each process.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) throw Error(fmt::format("--isolate: cannot fork: {}", std::strerror(errno)));
  if (child == 0) {
    // A runner killed outright (SIGKILL) takes its worker along: a hung kernel
    // left spinning would slow every later run pinned to its core.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    for (int fd : workerPipeEnds()) ::close(fd);
    ::close(requests[1]);
    ::close(reports[0]);
    runWorker(requests[0], reports[1], backends_, settings_);
  }
  ::close(requests[0]);
  ::close(reports[1]);
  worker_ = {child, requests[1], reports[0], true};
  workerPipeEnds().push_back(worker_.requests);
  workerPipeEnds().push_back(worker_.reports);
}

bool IsolatedCases::send(const std::string& request) {
  // A worker that died while idle (killed from outside) has closed its end:
  // the write fails with EPIPE, and SIGPIPE, held back, must not end the run.
  sigset_t pipe_signal, previous;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  const bool sent = writeFully(worker_.requests, request);
  const int write_error = errno;
  const timespec no_wait{0, 0};
  while (::sigtimedwait(&pipe_signal, nullptr, &no_wait) > 0) {
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  errno = write_error;
  return sent;
}

int IsolatedCases::stop(bool kill_it) {
  if (worker_.pid == 0) return 0;
  if (kill_it) ::kill(worker_.pid, SIGKILL);
  closeWorkerPipeEnd(worker_.requests);  // a worker waiting for a case ends
  closeWorkerPipeEnd(worker_.reports);
  int status = 0;
  while (::waitpid(worker_.pid, &status, 0) < 0 && errno == EINTR) {
  }
  worker_ = {};
  return status;
}

IsolatedCases::Report IsolatedCases::attempt(const SuiteCase& c, const std::vector<std::size_t>& indices,
                                             const StageObserver& observe) {
  if (worker_.pid == 0) start();
  Report report;
  const std::string request = caseRequest(c, indices);
  if (!send(request)) {  // the worker is gone: a fresh one takes the case
    stop(true);
    start();
    if (!send(request))
      throw Error(fmt::format("--isolate: cannot send a case to the worker: {}", std::strerror(errno)));
  }
  setRunningChild(worker_.pid);
  using Clock = std::chrono::steady_clock;
  const double timeout_s = isolation_.case_timeout_s;
  const auto seconds = [](double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  const auto limit = seconds(timeout_s);
  // A fresh worker warms up first (warmUpBackends): the case's time starts when it is ready.
  const auto warm_up_limit = seconds(warmUpLimitS(timeout_s));
  auto deadline = Clock::now() + (worker_.fresh ? warm_up_limit : limit);
  std::string pending;
  char buffer[65536];
  while (!report.rows && report.error.empty()) {
    int wait_ms = -1;
    if (timeout_s > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        report.timed_out = true;
        report.warming_up = worker_.fresh && !report.ready;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left, 1000));
    }
    pollfd readable{worker_.reports, POLLIN, 0};
    const int ready = ::poll(&readable, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(worker_.reports, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the worker closed its end: it died
    pending.append(buffer, static_cast<std::size_t>(n));
    for (std::size_t end; (end = pending.find('\n')) != std::string::npos; pending.erase(0, end + 1))
      readLine(pending.substr(0, end), report, indices, observe);
    if (worker_.fresh && report.ready) {
      worker_.fresh = false;
      deadline = Clock::now() + limit;
    }
  }
  setRunningChild(0);
  report.worker_ended = !report.rows;
  if (report.worker_ended) {
    // Dead, hung or giving up: collect how it ended, and start afresh next time.
    report.wait_status = stop(report.timed_out);
  }
  return report;
}

std::vector<ResultRow> IsolatedCases::run(const SuiteCase& c, const StageObserver& observe) {
  std::vector<std::optional<ResultRow>> rows(backends_.size());
  for (;;) {
    std::vector<std::size_t> indices;  // the backends still to run, by their index in `backends_`
    for (std::size_t b = 0; b < backends_.size(); ++b)
      if (!rows[b]) indices.push_back(b);
    if (indices.empty()) break;
    const Report report = attempt(c, indices, observe);
    if (report.rows && report.rows->size() == indices.size()) {
      for (std::size_t i = 0; i < indices.size(); ++i) rows[indices[i]] = (*report.rows)[i];
      break;
    }
    const std::string ended = howItEnded(report, isolation_.case_timeout_s);
    const std::string fault = report.fault.empty() ? "" : "; " + report.fault;
    if (!report.backend || *report.backend == kNoBackend) {
      // Before any backend ran: the case itself cannot run, or no worker could start.
      const double warm_up_s = warmUpLimitS(isolation_.case_timeout_s);
      for (std::size_t b : indices) {
        ResultRow row = blankRow(settings_, c, backends_[b]->name());
        row.status = VerifyStatus::Error;
        row.note = report.warming_up ? fmt::format("a fresh worker did not finish its warm-up (compilers, JIT, "
                                                   "libraries) within {:g} s, before the case began",
                                                   warm_up_s)
                                     : fmt::format("the case {} while preparing the data{}", ended, fault);
        rows[b] = std::move(row);
      }
      break;
    }
    // The backend at work when the worker ended costs its row; the others run again.
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
