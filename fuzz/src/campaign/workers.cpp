// Forked campaign workers (workers.hpp). Each worker talks to the parent over one Unix socket pair:
// a message is an 8-byte length and the bytes; a result starts with one status byte (0 done,
// 1 the work threw).
#include "kparity/fuzz/campaign/workers.hpp"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace kparity::fuzz {
namespace {

bool write_all(int fd, const void* data, std::size_t n) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);  // a dead peer is an error, not SIGPIPE
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* data, std::size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool send_message(int fd, const std::string& s) {
  const std::uint64_t n = s.size();
  return write_all(fd, &n, sizeof n) && write_all(fd, s.data(), s.size());
}

std::optional<std::string> receive_message(int fd) {
  std::uint64_t n = 0;
  if (!read_all(fd, &n, sizeof n)) return std::nullopt;
  std::string s(n, '\0');
  if (n > 0 && !read_all(fd, s.data(), n)) return std::nullopt;
  return s;
}

[[noreturn]] void worker_main(int fd, const WorkerCallbacks& cb) {
  for (;;) {
    const auto task = receive_message(fd);
    if (!task) _exit(0);  // the parent closed the socket: no more tasks
    std::string result;
    try {
      result = std::string(1, '\0') + cb.work(*task);
    } catch (const std::exception& e) {
      result = std::string(1, '\1') + e.what();
    } catch (...) {
      result = std::string(1, '\1') + "an exception that is not a std::exception";
    }
    // _exit, not exit: the parent's buffered output and static objects are the parent's.
    if (!send_message(fd, result)) _exit(1);
  }
}

std::string exit_text(int status) {
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "stopped";
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::optional<std::string> task;  // in flight
};

}  // namespace

int default_jobs() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

void run_workers(int jobs, const WorkerCallbacks& cb) {
  std::vector<Worker> workers(static_cast<std::size_t>(jobs));
  // Forks a worker into `w`; false when the system refuses.
  const auto spawn = [&](Worker& w) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(sv[0]);
      ::close(sv[1]);
      return false;
    }
    if (pid == 0) {
      // The siblings' sockets stay with the parent: a child holding one would keep that sibling
      // from seeing the parent's close.
      for (const auto& other : workers)
        if (other.fd >= 0) ::close(other.fd);
      ::close(sv[0]);
      worker_main(sv[1], cb);
    }
    ::close(sv[1]);
    w = {pid, sv[0], std::nullopt};
    return true;
  };
  for (auto& w : workers) spawn(w);
  if (std::none_of(workers.begin(), workers.end(), [](const Worker& w) { return w.fd >= 0; }))
    throw std::runtime_error(std::string("cannot start a worker process: ") + std::strerror(errno));

  bool tasks_left = true;
  const auto assign = [&](Worker& w) {
    while (tasks_left) {
      w.task = cb.next();
      if (!w.task) {
        tasks_left = false;
        break;
      }
      if (send_message(w.fd, *w.task)) return;
      const std::string task = *w.task;
      w.task.reset();
      cb.lost(task, "the worker process cannot be reached");
      return;  // the poll below reaps it
    }
    ::close(w.fd);  // nothing more: the worker exits
    w.fd = -1;
  };
  for (auto& w : workers)
    if (w.fd >= 0) assign(w);

  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Worker*> who;
    for (auto& w : workers)
      if (w.fd >= 0) fds.push_back({w.fd, POLLIN, 0}), who.push_back(&w);
    if (fds.empty()) break;
    if (::poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Worker& w = *who[i];
      const auto result = receive_message(w.fd);
      if (!result || result->empty()) {
        ::close(w.fd);
        w.fd = -1;
        int status = 0;
        ::waitpid(w.pid, &status, 0);
        w.pid = -1;
        const std::optional<std::string> task = w.task;
        w.task.reset();
        if (task) cb.lost(*task, "the worker process " + exit_text(status));
        // A fresh worker takes its place, so that one crashing case does not starve the rest.
        if (tasks_left && spawn(w)) assign(w);
        continue;
      }
      const std::string task = *w.task;
      w.task.reset();
      if ((*result)[0] == '\0')
        cb.done(task, result->substr(1));
      else
        cb.lost(task, "the worker threw: " + result->substr(1));
      assign(w);
    }
  }
  // Every worker died and none could be started again: nobody runs what is left.
  while (tasks_left) {
    auto t = cb.next();
    if (!t) break;
    cb.lost(*t, "no worker process left");
  }
  for (auto& w : workers)
    if (w.pid > 0) {
      int status = 0;
      ::waitpid(w.pid, &status, 0);
    }
}

}  // namespace kparity::fuzz
