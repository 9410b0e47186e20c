// What runs a call (backend.hpp).
#include "kparity/judge/backend.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "probe.hpp"

namespace kparity::judging {

bool Backend::implements(std::string_view op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

const std::vector<std::string>& cuda_backend_ops() { return kernel_ops(); }

DeviceProbe probe_cuda(bool in_child) {
  if (!in_child) return probe_cuda_here();
  int fds[2];
  if (::pipe(fds) != 0) return {false, "cannot probe for a CUDA device (pipe failed)"};
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return {false, "cannot probe for a CUDA device (fork failed)"};
  }
  if (pid == 0) {
    ::close(fds[0]);
    const DeviceProbe p = probe_cuda_here();
    const std::string msg = (p.available ? "1" : "0") + p.why;
    for (std::size_t at = 0; at < msg.size();) {
      const ssize_t w = ::write(fds[1], msg.data() + at, msg.size() - at);
      if (w <= 0) break;
      at += static_cast<std::size_t>(w);
    }
    _exit(0);  // not exit(): this process's buffers and static objects belong to the parent
  }
  ::close(fds[1]);
  std::string msg;
  char buf[256];
  for (ssize_t r; (r = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    msg.append(buf, static_cast<std::size_t>(r));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (msg.empty()) return {false, "the CUDA probe process died"};
  return {msg[0] == '1', msg.substr(1)};
}

std::vector<Backend> cuda_backends(std::string& why) { return cuda_backends(probe_cuda(false), why); }

}  // namespace kparity::judging
