// A sticky error: a kernel fault breaks CUDA for the rest of its process, so it is
// provoked in a child process (ew_cuda_sticky_child, sticky_child.cpp), which must see
// ew::Error(device_fatal) from every later call within a time limit, never a hang.
// This process, with its own CUDA context, must be unaffected.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "cuda_test_support.hpp"

extern char** environ;

namespace ew::test {
namespace {

class CudaSticky : public NeedsCuda {};

struct ChildResult {
  bool timed_out = false;
  int status = 0;  // as waitpid reports it
  std::string output;
};

// Runs `path` with its stdout and stderr captured, killed after `seconds`.
ChildResult run_bounded(const char* path, int seconds) {
  ChildResult r;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  char* argv[] = {const_cast<char*>(path), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, path, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    throw std::runtime_error(std::string("cannot start ") + path);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  auto left_ms = [&] {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return left.count() > 0 ? int(left.count()) : 0;
  };
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, left_ms()) <= 0) {
      r.timed_out = true;
      break;
    }
    char buffer[4096];
    const ssize_t got = read(fds[0], buffer, sizeof buffer);
    if (got <= 0) break;  // end of output: the child is exiting
    r.output.append(buffer, std::size_t(got));
  }
  close(fds[0]);
  while (!r.timed_out && waitpid(pid, &r.status, WNOHANG) == 0) {
    if (left_ms() == 0) r.timed_out = true;
    else usleep(10'000);
  }
  if (r.timed_out) {
    kill(pid, SIGKILL);
    waitpid(pid, &r.status, 0);
  }
  return r;
}

TEST_F(CudaSticky, KernelFaultInAChildProcess) {
  Context ctx(Backend::cuda);  // this process holds a context while the child breaks its own
  check_spaces<float>(ctx, Op::add, 100'003, MemorySpace::host, MemorySpace::pinned, MemorySpace::device);

  const ChildResult child = run_bounded(EW_STICKY_CHILD, 120);
  std::printf("%s", child.output.c_str());
  ASSERT_FALSE(child.timed_out) << "the child did not finish within 120 s: a call hangs after the fault";
  ASSERT_TRUE(WIFEXITED(child.status)) << "the child died of a signal: " << (WIFSIGNALED(child.status) ? WTERMSIG(child.status) : 0);
  EXPECT_EQ(WEXITSTATUS(child.status), 0) << child.output;
  EXPECT_NE(child.output.find("every call after the fault raised device_fatal"), std::string::npos) << child.output;

  // This process goes on as before: host-resident and device-resident ops.
  check_spaces<float>(ctx, Op::triad, 100'003, MemorySpace::host, MemorySpace::pinned, MemorySpace::device);
  check_spaces<double>(ctx, Op::axpby, 100'003, MemorySpace::device, MemorySpace::host, MemorySpace::device);
  check_spaces<double>(ctx, Op::mul, 50'001, MemorySpace::pinned, MemorySpace::host, MemorySpace::host);
}

}  // namespace
}  // namespace ew::test
