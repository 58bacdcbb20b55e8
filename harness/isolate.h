// Running a kernel in a child process, so that a kernel that crashes, hangs,
// writes outside its buffers or returns an error is a finding reported with
// its case, not a dead harness (docs/DESIGN.md §3 and §7: SLEEF keeps the code
// under test in another process). ln_check runs every plugin kernel this way.
//
// How. An Isolator forks a small launcher process when it is made; for every
// call the parent lays the kernel's buffers out in a memfd and hands it to the
// launcher, which forks a worker that maps it and calls the kernel:
//   * every buffer lies between two PROT_NONE guard pages; the slack between
//     a buffer and its guard pages holds canary bytes, checked after the call
//     (so a write a few bytes past the end is caught too);
//   * the inputs (x, gamma, beta, dy, and the backward's mean and rstd) are
//     mapped read-only;
//   * a SIGSEGV or SIGBUS records the faulting address, which the parent
//     names: "4 bytes past the end of y", "inside the input x";
//   * a worker still running after the timeout is killed (SIGKILL).
// Outputs are copied back only when the kernel returned 0 and every canary
// is intact.
//
// Why a launcher rather than forking the parent per call: GNU libgomp is not
// fork-safe (a child forked after the parent ran an OpenMP region deadlocks
// in its first one), and the parent runs OpenMP kernels. The launcher is
// forked before that, from a single-threaded process. So: make the Isolator
// early, after loading the plugins whose kernels it will run (the workers
// inherit the launcher's address space, not the parent's later dlopens) and
// before running any multithreaded kernel.
#ifndef LNV_HARNESS_ISOLATE_H_
#define LNV_HARNESS_ISOLATE_H_

#include <sys/types.h>

#include <mutex>
#include <string>

#include "impls/api.h"
#include "impls/registry.h"

namespace lnv {

enum class CallStatus {
  kOk,             // returned 0, buffers intact
  kReturnedError,  // returned non-zero
  kCrashed,        // killed by a signal, or exited, before returning
  kTimedOut,       // still running after the timeout
  kBufferOverrun,  // touched memory outside its buffers, or wrote into an input
  kHarnessError,   // the isolation itself failed (fork, memfd, ...)
};

struct CallResult {
  CallStatus status = CallStatus::kOk;
  int rc = 0;           // the kernel's return value (kOk, kReturnedError)
  std::string message;  // one line, e.g. "killed by SIGSEGV at 0x0 (outside its buffers)"
};

// How the judge calls a kernel.
class KernelRunner {
 public:
  virtual ~KernelRunner() = default;
  virtual CallResult Forward(const ImplInfo& impl, const ForwardArgs& args) = 0;
  virtual CallResult Backward(const ImplInfo& impl, const BackwardArgs& args) = 0;
};

// Seconds a plugin kernel call may take before it is killed and reported as
// timed out: ln_check's default --timeout, the properties' and fuzz_ln's.
inline constexpr double kDefaultCallSeconds = 60;

struct IsolateOptions {
  double timeout_seconds = kDefaultCallSeconds;  // per call
};

class Isolator : public KernelRunner {
 public:
  explicit Isolator(const IsolateOptions& options = {});  // forks the launcher
  ~Isolator() override;
  Isolator(const Isolator&) = delete;
  Isolator& operator=(const Isolator&) = delete;

  // "" when the launcher is running, else why not (then every call returns
  // kHarnessError with this message).
  const std::string& error() const { return error_; }

  CallResult Forward(const ImplInfo& impl, const ForwardArgs& args) override;
  CallResult Backward(const ImplInfo& impl, const BackwardArgs& args) override;

 private:
  struct Buffer;
  CallResult Call(int op, const void* fn, const ImplInfo& impl, std::int64_t rows, std::int64_t d,
                  float eps, Buffer* buffers, int count);

  IsolateOptions options_;
  std::mutex mutex_;  // one call at a time on the socket
  int socket_ = -1;
  pid_t launcher_ = -1;
  std::string error_;
};

}  // namespace lnv

#endif  // LNV_HARNESS_ISOLATE_H_
