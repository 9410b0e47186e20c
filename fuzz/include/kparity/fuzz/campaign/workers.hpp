#pragma once
// Parallel workers for a campaign: forked processes, not threads. RapidCheck keeps the state of the
// check in progress (its implicit parameters: the generation context, the current property) in plain
// static variables, so two checks must never run at once in one process. A forked worker has its own
// copy of everything, its own CUDA context (with its own default stream and device mirrors: the
// parent never initialises CUDA, see backends/backend.hpp's probe_cuda), and shares the GPU with its
// siblings.
//
// Tasks and results are opaque strings (the campaign sends JSON): the parent hands a task to each
// idle worker in the order next() gives them, and done() sees each result as it arrives; results may
// arrive in any order, so the caller keeps its own order. A worker that dies (a crash in a backend)
// is reported through lost() with its task; the others carry on.
#include <functional>
#include <optional>
#include <string>

namespace kparity::fuzz {

struct WorkerCallbacks {
  // Parent: the next task, or nullopt when there is none left.
  std::function<std::optional<std::string>()> next;
  // Worker: runs one task; an exception becomes lost() in the parent with its what().
  std::function<std::string(const std::string& task)> work;
  // Parent: a finished task and its result.
  std::function<void(const std::string& task, const std::string& result)> done;
  // Parent: a task whose worker died or threw, and why.
  std::function<void(const std::string& task, const std::string& why)> lost;
};

// Forks `jobs` workers (jobs >= 1), runs every task, reaps the workers. Flush every output stream
// before calling: a forked child would otherwise repeat what is still buffered. Throws
// std::runtime_error when no worker can be started.
void run_workers(int jobs, const WorkerCallbacks& cb);

// The number of hardware threads (at least 1): the default of --jobs.
int default_jobs();

}  // namespace kparity::fuzz
