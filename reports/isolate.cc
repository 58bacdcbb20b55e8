#include "reports/isolate.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>

#include "harness/case_file.h"

namespace lnv::report {
namespace {

using nlohmann::json;

json H(double v) { return FormatValue(v); }
double D(const json& j) {
  double v = 0;
  return j.is_string() && ParseValue(j.get<std::string>(), &v) ? v : std::nan("");
}

json ElementJson(const ElementResult& e) {
  return {e.index,
          H(e.kernel),
          H(e.exact.rounded),
          H(e.exact.hi),
          H(e.exact.lo),
          static_cast<int>(e.exact.status),
          H(e.error),
          H(e.ulps),
          H(e.bound),
          H(e.bound_use),
          static_cast<int>(e.verdict)};
}

ElementResult ElementFrom(const json& j) {
  ElementResult e;
  e.index = j[0].get<std::int64_t>();
  e.kernel = D(j[1]);
  e.exact.rounded = D(j[2]);
  e.exact.hi = D(j[3]);
  e.exact.lo = D(j[4]);
  e.exact.status = static_cast<ValueStatus>(j[5].get<int>());
  e.error = D(j[6]);
  e.ulps = D(j[7]);
  e.bound = D(j[8]);
  e.bound_use = D(j[9]);
  e.verdict = static_cast<Verdict>(j[10].get<int>());
  return e;
}

// A child that died or hung: the whole case is a kernel error.
CaseMeasure Failed(const Case& c, const std::string& why) {
  CaseMeasure m;
  m.verdict = Verdict::kKernelError;
  m.message = why;
  m.d = c.d;
  m.rows = c.rows;
  return m;
}

}  // namespace

bool RunsIsolated(const ImplInfo& impl) { return impl.name.rfind("plugin:", 0) == 0; }

std::string SerializeMeasure(const CaseMeasure& m) {
  json outs = json::array();
  for (const OutputMeasure& o : m.outputs) {
    json bins = json::array();
    for (const auto& [b, n] : o.hist.bins) bins.push_back({b, n});
    json pts = json::array();
    for (const RowPoint& p : o.points) {
      pts.push_back({H(p.kappa), H(p.log2_mag), H(p.err), H(p.bound), H(p.pbound),
                     static_cast<int>(p.kind), p.failed, p.item, p.row});
    }
    outs.push_back({o.present, static_cast<int>(o.verdict), H(o.max_ulp), H(o.max_bound_use),
                    o.count, o.unclaimed, o.out_of_range, o.undecided,
                    o.worst ? ElementJson(*o.worst) : json(nullptr), o.worst_row, o.hist.zeros,
                    o.hist.nonfinite, bins, pts});
  }
  return json{static_cast<int>(m.verdict), m.message, m.d, m.rows, m.rows_out_of_range, outs}
      .dump();
}

bool ParseMeasure(const std::string& text, CaseMeasure* m) {
  try {
    const json j = json::parse(text);
    m->verdict = static_cast<Verdict>(j[0].get<int>());
    m->message = j[1].get<std::string>();
    m->d = j[2].get<std::int64_t>();
    m->rows = j[3].get<std::int64_t>();
    m->rows_out_of_range = j[4].get<std::int64_t>();
    for (int i = 0; i < 6; ++i) {
      const json& o = j[5][i];
      OutputMeasure& x = m->outputs[i];
      x.present = o[0].get<bool>();
      x.verdict = static_cast<Verdict>(o[1].get<int>());
      x.max_ulp = D(o[2]);
      x.max_bound_use = D(o[3]);
      x.count = o[4].get<std::int64_t>();
      x.unclaimed = o[5].get<std::int64_t>();
      x.out_of_range = o[6].get<std::int64_t>();
      x.undecided = o[7].get<std::int64_t>();
      if (!o[8].is_null()) x.worst = ElementFrom(o[8]);
      x.worst_row = o[9].get<std::int64_t>();
      x.hist.zeros = o[10].get<std::int64_t>();
      x.hist.nonfinite = o[11].get<std::int64_t>();
      for (const json& b : o[12]) x.hist.bins[b[0].get<int>()] = b[1].get<std::int64_t>();
      for (const json& p : o[13]) {
        RowPoint r;
        r.kappa = D(p[0]);
        r.log2_mag = D(p[1]);
        r.err = D(p[2]);
        r.bound = D(p[3]);
        r.pbound = D(p[4]);
        r.kind = static_cast<PointKind>(p[5].get<int>());
        r.failed = p[6].get<bool>();
        r.item = p[7].get<std::int32_t>();
        r.row = p[8].get<std::int32_t>();
        x.points.push_back(r);
      }
    }
    return true;
  } catch (const json::exception&) {
    return false;
  }
}

CaseMeasure MeasureIsolated(const ImplInfo& impl, const Case& c, const Reference& ref,
                            bool with_points, std::int32_t item, double timeout_seconds) {
  int fds[2];
  if (pipe(fds) != 0)
    return Failed(c, std::string("cannot isolate: pipe: ") + std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Failed(c, std::string("cannot isolate: fork: ") + std::strerror(errno));
  }
  if (pid == 0) {  // the child: judge, send, and leave without running any destructor
    close(fds[0]);
    JudgeOptions jo;
    jo.keep_elements = true;
    const std::string text = SerializeMeasure(
        Measure(impl, c, ref, JudgeWithReference(impl, c, ref, jo), with_points, item));
    std::size_t sent = 0;
    while (sent < text.size()) {
      const ssize_t n = write(fds[1], text.data() + sent, text.size() - sent);
      if (n <= 0) _exit(3);
      sent += static_cast<std::size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string text;
  char buf[1 << 16];
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_seconds);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int r = poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the child is done (or dead)
    text.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    char why[96];
    std::snprintf(why, sizeof why, "hung: no answer within %.0f s (killed)", timeout_seconds);
    return Failed(c, why);
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return Failed(c, "crashed: signal " + std::to_string(sig) + " (" + strsignal(sig) + ")");
  }
  CaseMeasure m;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !ParseMeasure(text, &m)) {
    return Failed(c, "the isolated judge exited with status " +
                         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  return m;
}

}  // namespace lnv::report
