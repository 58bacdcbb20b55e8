#include "harness/isolate.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>

namespace lnv {
namespace {

constexpr int kForward = 1;
constexpr int kBackward = 2;
constexpr int kMaxBuffers = 8;
constexpr std::uint64_t kAlign = 64;  // buffer starts are 64-byte aligned

// Worker exit statuses that are the harness's, not the kernel's.
constexpr int kWorkerMapFailed = 120;
constexpr int kWorkerKernelNotMapped = 121;

// At the start of the memfd: what the worker reports.
struct Header {
  std::uint64_t base;        // where the worker mapped the memfd
  std::uint64_t fault_addr;  // si_addr of a SIGSEGV/SIGBUS
  std::int32_t fault_signal;
  std::int32_t done;  // the kernel returned
  std::int32_t rc;    // what it returned
};

struct WireBuffer {
  std::uint64_t present;
  std::uint64_t input;
  std::uint64_t start;  // offset of the buffer in the memfd
  std::uint64_t bytes;
  std::uint64_t data_begin;  // its data pages: [data_begin, data_end), page aligned
  std::uint64_t data_end;
};

struct Request {
  std::int32_t op;
  std::int32_t count;
  std::uint64_t fn;
  std::int64_t rows, d;
  float eps;
  double timeout_seconds;
  std::uint64_t total;
  std::uint64_t page;
  WireBuffer buffers[kMaxBuffers];
};

struct Reply {
  enum How : std::int32_t { kExited = 0, kSignaled = 1, kTimedOut = 2, kForkFailed = 3 };
  std::int32_t how;
  std::int32_t code;  // exit status, signal number or errno
};

unsigned char CanaryByte(std::uint64_t pos) {
  return static_cast<unsigned char>(0xA5 ^ (pos * 151));
}

std::uint64_t RoundUp(std::uint64_t v, std::uint64_t to) { return (v + to - 1) / to * to; }

std::string SignalName(int sig) {
  switch (sig) {
    case SIGSEGV:
      return "SIGSEGV";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGILL:
      return "SIGILL";
    case SIGABRT:
      return "SIGABRT";
    case SIGKILL:
      return "SIGKILL";
    case SIGTERM:
      return "SIGTERM";
    case SIGTRAP:
      return "SIGTRAP";
  }
  return "signal " + std::to_string(sig);
}

// ---- The worker: maps the call's memfd, guards it, calls the kernel. ----

volatile Header* g_header = nullptr;

void OnFault(int sig, siginfo_t* info, void*) {
  // Async-signal-safe: plain stores into the shared page. SA_RESETHAND has
  // restored the default action, so returning re-faults and ends the worker
  // with this signal.
  if (sig == SIGSEGV || sig == SIGBUS) {  // si_addr means nothing for the others
    g_header->fault_addr = reinterpret_cast<std::uint64_t>(info->si_addr);
  }
  g_header->fault_signal = sig;
}

[[noreturn]] void WorkerMain(const Request& req, int fd) {
  const rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  void* map = mmap(nullptr, req.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) _exit(kWorkerMapFailed);
  auto* base = static_cast<unsigned char*>(map);
  g_header = reinterpret_cast<Header*>(base);
  g_header->base = reinterpret_cast<std::uint64_t>(base);
  // Everything but the header page and the buffers' data pages is a guard.
  std::uint64_t pos = req.page;
  for (int i = 0; i < req.count; ++i) {
    const WireBuffer& b = req.buffers[i];
    if (!b.present) continue;
    mprotect(base + pos, b.data_begin - pos, PROT_NONE);
    if (b.input) mprotect(base + b.data_begin, b.data_end - b.data_begin, PROT_READ);
    pos = b.data_end;
  }
  mprotect(base + pos, req.total - pos, PROT_NONE);

  Dl_info where;
  if (dladdr(reinterpret_cast<void*>(req.fn), &where) == 0) _exit(kWorkerKernelNotMapped);

  static unsigned char alt_stack[1 << 16];
  stack_t ss = {};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa = {};
  sa.sa_sigaction = &OnFault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  // Every fatal signal, not only the memory faults: the handler also replaces
  // a sanitizer's, which would end the worker with an exit status instead.
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP}) sigaction(sig, &sa, nullptr);

  const auto ptr = [&](int i) -> void* {
    const WireBuffer& b = req.buffers[i];
    return b.present ? base + b.start : nullptr;
  };
  int rc = 0;
  if (req.op == kForward) {
    ForwardArgs a{};
    a.rows = req.rows;
    a.d = req.d;
    a.x = ptr(0);
    a.gamma = ptr(1);
    a.beta = ptr(2);
    a.eps = req.eps;
    a.y = ptr(3);
    a.mean = static_cast<float*>(ptr(4));
    a.rstd = static_cast<float*>(ptr(5));
    rc = reinterpret_cast<ForwardFn>(req.fn)(&a);
  } else {
    BackwardArgs a{};
    a.rows = req.rows;
    a.d = req.d;
    a.x = ptr(0);
    a.gamma = ptr(1);
    a.dy = ptr(2);
    a.mean = static_cast<const float*>(ptr(3));
    a.rstd = static_cast<const float*>(ptr(4));
    a.eps = req.eps;
    a.dx = ptr(5);
    a.dgamma = ptr(6);
    a.dbeta = ptr(7);
    rc = reinterpret_cast<BackwardFn>(req.fn)(&a);
  }
  g_header->rc = rc;
  g_header->done = 1;
  std::fflush(nullptr);  // what the kernel printed (_exit would drop it)
  _exit(0);
}

// ---- The launcher: one worker per request, a timeout, a reply. ----

bool ReceiveRequest(int sock, Request* req, int* fd) {
  iovec iov = {req, sizeof *req};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(sock, &msg, 0);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof *req)) return false;
  const cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (c == nullptr || c->cmsg_type != SCM_RIGHTS) return false;
  std::memcpy(fd, CMSG_DATA(c), sizeof(int));
  return true;
}

Reply WaitForWorker(pid_t pid, double timeout_seconds, const sigset_t& chld) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(timeout_seconds));
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      if (WIFSIGNALED(status)) return {Reply::kSignaled, WTERMSIG(status)};
      return {Reply::kExited, WEXITSTATUS(status)};
    }
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return {Reply::kTimedOut, 0};
    }
    const auto step = std::min<Clock::duration>(left, std::chrono::milliseconds(100));
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(step).count();
    const timespec ts = {static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    sigtimedwait(&chld, nullptr, &ts);  // woken early by SIGCHLD
  }
}

[[noreturn]] void LauncherMain(int sock) {
  signal(SIGCHLD, SIG_DFL);  // waitpid must see the workers
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, nullptr);
  for (;;) {
    Request req;
    int fd = -1;
    if (!ReceiveRequest(sock, &req, &fd)) _exit(0);  // the parent is gone or done
    const pid_t pid = fork();
    if (pid == 0) {
      close(sock);
      sigprocmask(SIG_UNBLOCK, &chld, nullptr);
      WorkerMain(req, fd);
    }
    const int fork_errno = errno;
    close(fd);
    const Reply reply = pid < 0 ? Reply{Reply::kForkFailed, fork_errno}
                                : WaitForWorker(pid, req.timeout_seconds, chld);
    if (send(sock, &reply, sizeof reply, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof reply)) {
      _exit(0);
    }
  }
}

bool SendRequest(int sock, const Request& req, int fd) {
  iovec iov = {const_cast<Request*>(&req), sizeof req};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  ssize_t n;
  do {
    n = sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof req);
}

// A memfd mapped in the parent for the length of one call.
class SharedMemory {
 public:
  explicit SharedMemory(std::uint64_t bytes) : bytes_(bytes) {
    fd_ = memfd_create("lnv-kernel-call", MFD_CLOEXEC);
    if (fd_ < 0 || ftruncate(fd_, static_cast<off_t>(bytes)) != 0) return;
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (p != MAP_FAILED) data_ = static_cast<unsigned char*>(p);
  }
  ~SharedMemory() {
    if (data_ != nullptr) munmap(data_, bytes_);
    if (fd_ >= 0) close(fd_);
  }
  unsigned char* data() const { return data_; }
  int fd() const { return fd_; }

 private:
  std::uint64_t bytes_;
  int fd_ = -1;
  unsigned char* data_ = nullptr;
};

}  // namespace

// One buffer of a call, on the parent's side.
struct Isolator::Buffer {
  const char* name = "";
  const void* src = nullptr;  // contents before the call (nullptr: absent)
  void* dst = nullptr;        // outputs: where the result goes
  std::uint64_t bytes = 0;
  bool input = true;
  WireBuffer wire{};
};

Isolator::Isolator(const IsolateOptions& options) : options_(options) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    error_ = std::string("socketpair: ") + std::strerror(errno);
    return;
  }
  std::fflush(nullptr);  // the launcher must not flush the parent's buffered output again
  const pid_t pid = fork();
  if (pid < 0) {
    error_ = std::string("fork: ") + std::strerror(errno);
    close(sv[0]);
    close(sv[1]);
    return;
  }
  if (pid == 0) {
    close(sv[0]);
    LauncherMain(sv[1]);
  }
  close(sv[1]);
  socket_ = sv[0];
  launcher_ = pid;
}

Isolator::~Isolator() {
  if (socket_ >= 0) {
    // shutdown, not just close: later launchers inherited this descriptor.
    shutdown(socket_, SHUT_RDWR);
    close(socket_);
  }
  if (launcher_ > 0) waitpid(launcher_, nullptr, 0);
}

CallResult Isolator::Forward(const ImplInfo& impl, const ForwardArgs& a) {
  const std::uint64_t n = static_cast<std::uint64_t>(a.rows * a.d);
  const std::uint64_t xs = SizeOf(impl.x_dtype), ps = SizeOf(impl.param_dtype);
  const std::uint64_t d = static_cast<std::uint64_t>(a.d),
                      rows = static_cast<std::uint64_t>(a.rows);
  Buffer b[6];
  b[0] = {"x", a.x, nullptr, n * xs, true};
  b[1] = {"gamma", a.gamma, nullptr, d * ps, true};
  b[2] = {"beta", a.beta, nullptr, d * ps, true};
  b[3] = {"y", a.y, a.y, n * xs, false};
  b[4] = {"mean", a.mean, a.mean, rows * 4, false};
  b[5] = {"rstd", a.rstd, a.rstd, rows * 4, false};
  return Call(kForward, reinterpret_cast<const void*>(impl.forward), impl, a.rows, a.d, a.eps, b,
              6);
}

CallResult Isolator::Backward(const ImplInfo& impl, const BackwardArgs& a) {
  const std::uint64_t n = static_cast<std::uint64_t>(a.rows * a.d);
  const std::uint64_t xs = SizeOf(impl.x_dtype), ps = SizeOf(impl.param_dtype);
  const std::uint64_t d = static_cast<std::uint64_t>(a.d),
                      rows = static_cast<std::uint64_t>(a.rows);
  Buffer b[8];
  b[0] = {"x", a.x, nullptr, n * xs, true};
  b[1] = {"gamma", a.gamma, nullptr, d * ps, true};
  b[2] = {"dy", a.dy, nullptr, n * xs, true};
  b[3] = {"mean", a.mean, nullptr, rows * 4, true};
  b[4] = {"rstd", a.rstd, nullptr, rows * 4, true};
  b[5] = {"dx", a.dx, a.dx, n * xs, false};
  b[6] = {"dgamma", a.dgamma, a.dgamma, d * ps, false};
  b[7] = {"dbeta", a.dbeta, a.dbeta, d * ps, false};
  return Call(kBackward, reinterpret_cast<const void*>(impl.backward), impl, a.rows, a.d, a.eps, b,
              8);
}

namespace {

// Lays the buffers out in the memfd: a header page, then per buffer [guard
// page][data pages, the data at their end], then a last guard. Fills each
// buffer's wire entry and req->buffers; returns the total size.
template <class Buf>
std::uint64_t LayOut(Buf* buffers, int count, std::uint64_t page, Request* req) {
  std::uint64_t pos = page;
  for (int i = 0; i < count; ++i) {
    Buf& b = buffers[i];
    WireBuffer& w = b.wire;
    w = {};
    if (b.src == nullptr) continue;
    w.present = 1;
    w.input = b.input;
    w.bytes = b.bytes;
    w.data_begin = pos + page;
    const std::uint64_t padded = RoundUp(b.bytes, kAlign);
    w.data_end = w.data_begin + std::max<std::uint64_t>(page, RoundUp(padded, page));
    w.start = w.data_end - padded;  // overruns reach the tail canary, then the guard page
    pos = w.data_end;
    req->buffers[i] = w;
  }
  return pos + page;
}

// Names an offset into the memfd by the nearest buffer: "byte 64 of y, past
// its end (y has bytes 0 to 63)". Sets *inside when within a buffer.
template <class Buf>
std::string Locate(std::uint64_t off, const Buf* buffers, int count, bool* inside) {
  *inside = false;
  std::string best = "the harness's header page";
  std::uint64_t best_dist = ~std::uint64_t{0};
  for (int i = 0; i < count; ++i) {
    const Buf& b = buffers[i];
    if (!b.wire.present) continue;
    const std::uint64_t start = b.wire.start, end = b.wire.start + b.bytes;
    const long long byte = static_cast<long long>(off) - static_cast<long long>(start);
    const std::string extent = std::string(" (") + b.name + " has bytes 0 to " +
                               std::to_string(static_cast<long long>(b.bytes) - 1) + ")";
    if (off >= start && off < end) {
      *inside = true;
      return "byte " + std::to_string(byte) + " of the " + (b.input ? "input " : "output ") +
             b.name;
    }
    if (off >= end && off - end < best_dist) {
      best_dist = off - end;
      best = "byte " + std::to_string(byte) + " of " + b.name + ", past its end" + extent;
    }
    if (off < start && start - off < best_dist) {
      best_dist = start - off;
      best = "byte " + std::to_string(byte) + " of " + b.name + ", before its start" + extent;
    }
  }
  return best;
}

// A worker killed by a signal: an overrun when the fault address lies in the
// memfd (named by Locate), else a crash.
template <class Buf>
CallResult DescribeSignal(int signal, const Header& h, std::uint64_t total, const Buf* buffers,
                          int count) {
  CallResult result;
  const std::string sig = SignalName(signal);
  if (h.fault_signal != 0 && h.base != 0 && h.fault_addr >= h.base &&
      h.fault_addr < h.base + total) {
    bool inside = false;
    const std::string where = Locate(h.fault_addr - h.base, buffers, count, &inside);
    result.status = CallStatus::kBufferOverrun;
    result.message = inside ? "killed by " + sig + ": wrote " + where + ", which is read-only"
                            : "killed by " + sig + ": touched " + where;
    return result;
  }
  result.status = CallStatus::kCrashed;
  result.message = "killed by " + sig;
  if (h.fault_signal == SIGSEGV || h.fault_signal == SIGBUS) {  // the only ones with an address
    char buf[64];
    std::snprintf(buf, sizeof buf, " at address 0x%" PRIx64 " (outside its buffers)", h.fault_addr);
    result.message += buf;
  }
  return result;
}

// The canaries around every buffer: the farthest changed byte on each side,
// as an overrun; nullopt when all are intact.
template <class Buf>
std::optional<CallResult> CheckCanaries(const unsigned char* mem, const Buf* buffers, int count) {
  for (int i = 0; i < count; ++i) {
    const Buf& b = buffers[i];
    if (!b.wire.present) continue;
    const std::uint64_t start = b.wire.start, end = start + b.bytes;
    const std::string extent = std::string("; ") + b.name + " has bytes 0 to " +
                               std::to_string(static_cast<long long>(b.bytes) - 1) + ")";
    for (std::uint64_t p = b.wire.data_end; p > end; --p) {
      if (mem[p - 1] != CanaryByte(p - 1)) {
        return CallResult{CallStatus::kBufferOverrun, 0,
                          std::string("wrote past the end of ") + b.name + " (as far as byte " +
                              std::to_string(p - 1 - start) + extent};
      }
    }
    for (std::uint64_t p = b.wire.data_begin; p < start; ++p) {
      if (mem[p] != CanaryByte(p)) {
        return CallResult{CallStatus::kBufferOverrun, 0,
                          std::string("wrote before the start of ") + b.name + " (from byte -" +
                              std::to_string(start - p) + extent};
      }
    }
  }
  return std::nullopt;
}

}  // namespace

CallResult Isolator::Call(int op, const void* fn, const ImplInfo& impl, std::int64_t rows,
                          std::int64_t d, float eps, Buffer* buffers, int count) {
  CallResult result;
  const auto harness_error = [&](const std::string& why) {
    result.status = CallStatus::kHarnessError;
    result.message = "isolation failed: " + why;
    return result;
  };
  if (!error_.empty()) return harness_error(error_);
  if (fn == nullptr) return harness_error(impl.name + " has no such function");

  const std::uint64_t page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  Request req = {};
  req.op = op;
  req.count = count;
  req.fn = reinterpret_cast<std::uint64_t>(fn);
  req.rows = rows;
  req.d = d;
  req.eps = eps;
  req.timeout_seconds = options_.timeout_seconds;
  req.page = page;
  req.total = LayOut(buffers, count, page, &req);

  SharedMemory shm(req.total);
  if (shm.data() == nullptr) return harness_error(std::string("memfd: ") + std::strerror(errno));
  unsigned char* mem = shm.data();
  for (int i = 0; i < count; ++i) {
    const Buffer& b = buffers[i];
    if (!b.wire.present) continue;
    for (std::uint64_t p = b.wire.data_begin; p < b.wire.data_end; ++p) mem[p] = CanaryByte(p);
    std::memcpy(mem + b.wire.start, b.src, b.bytes);
  }

  Reply reply{};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!SendRequest(socket_, req, shm.fd())) return harness_error("cannot reach the launcher");
    ssize_t got;
    do {
      got = recv(socket_, &reply, sizeof reply, 0);
    } while (got < 0 && errno == EINTR);
    if (got != static_cast<ssize_t>(sizeof reply)) return harness_error("the launcher died");
  }
  const Header& h = *reinterpret_cast<const Header*>(mem);

  // However the worker ended after a fault, the handler recorded the signal
  // first: report the signal even where something turned it into an exit.
  if (reply.how == Reply::kExited && !h.done && h.fault_signal != 0) {
    reply = {Reply::kSignaled, h.fault_signal};
  }
  switch (reply.how) {
    case Reply::kForkFailed:
      return harness_error(std::string("fork: ") + std::strerror(reply.code));
    case Reply::kTimedOut: {
      char buf[96];
      std::snprintf(buf, sizeof buf, "still running after %g s: killed", options_.timeout_seconds);
      result.status = CallStatus::kTimedOut;
      result.message = buf;
      return result;
    }
    case Reply::kSignaled:
      return DescribeSignal(reply.code, h, req.total, buffers, count);
    case Reply::kExited:
      break;
  }
  if (!h.done) {
    if (reply.code == kWorkerMapFailed) return harness_error("the worker cannot map the buffers");
    if (reply.code == kWorkerKernelNotMapped) {
      return harness_error(
          "the kernel's code is not mapped in the launcher (load plugins "
          "before making the Isolator)");
    }
    result.status = CallStatus::kCrashed;
    result.message = "the process exited with status " + std::to_string(reply.code) +
                     " before the kernel returned";
    return result;
  }
  if (std::optional<CallResult> overrun = CheckCanaries(mem, buffers, count)) return *overrun;
  result.rc = h.rc;
  if (h.rc != 0) {
    result.status = CallStatus::kReturnedError;
    result.message = "returned " + std::to_string(h.rc);
    return result;
  }
  for (int i = 0; i < count; ++i) {
    const Buffer& b = buffers[i];
    if (b.wire.present && !b.input) std::memcpy(b.dst, mem + b.wire.start, b.bytes);
  }
  return result;
}

}  // namespace lnv
