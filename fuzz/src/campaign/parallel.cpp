// A campaign in worker processes (parallel.hpp, workers.hpp). Tasks are handed out in property and
// chunk order; results come back in any order and are put back in that order, so the outcome of
// each property is the merge of its chunks (merge_chunk_runs) and equals a one-process run.
#include "parallel.hpp"

#include <stdlib.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kparity/fuzz/campaign/report.hpp"
#include "kparity/fuzz/campaign/workers.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"

namespace kparity::fuzz {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

// One task: chunks [first, end) of a property (a case budget), or the whole property for `seconds`.
struct Task {
  std::size_t prop = 0;
  int first = 0, end = 0;
  double seconds = 0.0;
};

json task_json(const Task& t) { return {{"prop", t.prop}, {"first", t.first}, {"end", t.end}, {"seconds", t.seconds}}; }
Task task_from(const std::string& s) {
  const json j = json::parse(s);
  return {j.at("prop").get<std::size_t>(), j.at("first").get<int>(), j.at("end").get<int>(), j.at("seconds").get<double>()};
}

// What a worker sends back besides the outcome: where it put a failure's call for the parent to
// move into the corpus (only the property's first failure is kept).
struct RunExtra {
  bool recorded = false;
  std::string tmp;         // the dump, in the run's scratch directory
  std::string save_error;  // why it could not be written
};

struct Slot {
  int first = 0, end = 0;                  // chunks of a case budget
  std::vector<PropertyOutcome> runs;
  std::vector<RunExtra> extras;
  int fail_chunk = INT_MAX;                // lowest failing chunk so far
  std::vector<char> got;                   // chunks back, by chunk - first
  bool whole = false;                      // a time budget: one run is all
  bool complete() const {
    if (whole) return !runs.empty();
    for (int k = first; k < std::min(end, fail_chunk == INT_MAX ? end : fail_chunk + 1); ++k)
      if (!got[static_cast<std::size_t>(k - first)]) return false;
    return true;
  }
};

// A scratch directory for the workers' dumps, removed with everything in it.
class Scratch {
 public:
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "kparity-fuzz-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot create a scratch directory in " + tmpl);
    path_ = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Moves a worker's dump into the corpus under the name a one-process run would have given it.
std::string move_into_corpus(const RunExtra& x, const std::string& corpus_dir) {
  if (!x.save_error.empty()) throw std::runtime_error(x.save_error);
  fs::create_directories(corpus_dir);
  const std::string path = (fs::path(corpus_dir) / fs::path(x.tmp).filename()).string();
  std::error_code ec;
  fs::rename(x.tmp, path, ec);
  if (ec) {  // another file system
    fs::copy_file(x.tmp, path, fs::copy_options::overwrite_existing);
    fs::remove(x.tmp);
  }
  return path;
}

}  // namespace

std::vector<PropertyOutcome> run_in_workers(const std::vector<Property>& props, const CampaignOptions& opt,
                                            std::ostream& log,
                                            const std::function<void(PropertyOutcome&, const FailedCall&)>& finish) {
  const Scratch scratch;
  const PropertyBudget base = property_budget(opt);
  const bool timed = opt.seconds.has_value();
  const auto t0 = Clock::now();
  std::vector<Slot> slots(props.size());
  for (auto& s : slots) {
    s.whole = timed;
    s.first = base.first_chunk;
    s.end = timed ? base.first_chunk : std::max(base.first_chunk, base.end_chunk);
    s.got.assign(static_cast<std::size_t>(s.end - s.first), 0);
  }

  std::vector<PropertyOutcome> out;
  std::size_t next_prop = 0;  // the next property whose chunks to hand out
  int next_chunk = slots.empty() ? 0 : slots[0].first;
  std::int64_t cases_back = 0;
  double last_progress = -1.0;

  const auto publish = [&] {
    // Finished properties, in order.
    while (out.size() < props.size() && slots[out.size()].complete()) {
      Slot& s = slots[out.size()];
      PropertyOutcome o;
      FailedCall call;
      if (s.runs.empty()) {  // this shard holds no chunk of the property
        PropertyBudget b = base;
        b.end_chunk = b.first_chunk;
        o = run_property(props[out.size()], b);
      } else {
        o = merge_chunk_runs(s.runs);
        if (!o.passed) {
          // The run merge_chunk_runs took the failure from: the lowest failing chunk.
          const RunExtra* x = nullptr;
          int lowest = INT_MAX;
          for (std::size_t i = 0; i < s.runs.size(); ++i)
            if (!s.runs[i].passed && s.runs[i].failed_chunk() < lowest) lowest = s.runs[i].failed_chunk(), x = &s.extras[i];
          if (x != nullptr) {
            call.recorded = x->recorded;
            call.save = [x, &opt] { return move_into_corpus(*x, opt.corpus_dir); };
          }
        }
      }
      if (opt.progress) log << "\r\x1b[2K";
      finish(o, call);
      out.push_back(std::move(o));
    }
  };

  WorkerCallbacks cb;
  cb.next = [&]() -> std::optional<std::string> {
    for (; next_prop < props.size(); ++next_prop) {
      Slot& s = slots[next_prop];
      if (timed) {
        // The time left, shared by the properties not handed out yet, `jobs` at a time.
        const double left = std::max(0.0, *opt.seconds - std::chrono::duration<double>(Clock::now() - t0).count());
        const double rounds = std::ceil(static_cast<double>(props.size() - next_prop) / opt.jobs);
        return task_json({next_prop++, s.first, s.first, left / rounds}).dump();
      }
      if (next_chunk < s.first) next_chunk = s.first;
      // Chunks after a known failure would be dropped by the merge: not worth running.
      if (next_chunk < s.end && next_chunk <= s.fail_chunk) {
        const int k = next_chunk++;
        return task_json({next_prop, k, k + 1, 0.0}).dump();
      }
      if (next_prop + 1 < props.size()) next_chunk = slots[next_prop + 1].first;
    }
    return std::nullopt;
  };
  cb.work = [&](const std::string& task) {
    const Task t = task_from(task);
    PropertyBudget b = base;
    if (timed) {
      b.seconds = t.seconds;
    } else {
      b.first_chunk = t.first;
      b.end_chunk = t.end;
    }
    PropertyOutcome o = run_property(props[t.prop], b);
    explain_outcome(props[t.prop], o, opt);
    json r = {{"outcome", outcome_json(o)}, {"recorded", o.failing_call.has_value()}};
    if (!o.passed && o.failing_call && !opt.corpus_dir.empty()) {
      try {
        r["tmp"] = save_call(*o.failing_call, scratch.path(), corpus_stem(o), corpus_info(o));
      } catch (const std::exception& e) {
        r["save_error"] = e.what();
      }
    }
    return r.dump();
  };
  const auto receive = [&](const Task& t, PropertyOutcome o, RunExtra x) {
    Slot& s = slots[t.prop];
    if (!o.passed) s.fail_chunk = std::min(s.fail_chunk, o.failed_chunk());
    if (!timed)
      for (int k = t.first; k < t.end; ++k) s.got[static_cast<std::size_t>(k - s.first)] = 1;
    cases_back += o.cases;
    s.runs.push_back(std::move(o));
    s.extras.push_back(std::move(x));
    publish();
    if (opt.progress) {
      const double now = std::chrono::duration<double>(Clock::now() - t0).count();
      if (last_progress < 0 || now - last_progress >= 0.1) {
        last_progress = now;
        log << "\r\x1b[2K" << fmt::format("[{}/{}] properties done, {} cases, {} workers", out.size(), props.size(),
                                          cases_back, opt.jobs)
            << std::flush;
      }
    }
  };
  cb.done = [&](const std::string& task, const std::string& result) {
    const Task t = task_from(task);
    const json r = json::parse(result);
    RunExtra x;
    x.recorded = r.at("recorded").get<bool>();
    x.tmp = r.value("tmp", "");
    x.save_error = r.value("save_error", "");
    receive(t, outcome_from_json(r.at("outcome")), std::move(x));
  };
  cb.lost = [&](const std::string& task, const std::string& why) {
    // The chunk (or property) failed without a verdict: a crash in a backend, say. Its repro line
    // replays it in one process.
    const Task t = task_from(task);
    const Property& p = props[t.prop];
    PropertyOutcome o;
    o.name = p.name;
    o.op = op_of(p);
    o.kind = p.kind;
    o.backend = backend_of(p);
    o.passed = false;
    o.first_chunk = t.first;
    o.chunks_run = 1;
    o.chunk_stride = base.chunk_stride;
    o.seed = chunk_seed(opt.seed, t.first);
    o.repro_cases = timed ? kChunkCases : std::min(kChunkCases, opt.cases.value_or(kChunkCases) - kChunkCases * t.first);
    o.message = "no verdict: " + why + "\n";
    receive(t, std::move(o), RunExtra{});
  };
  log.flush();
  std::fflush(nullptr);  // a forked worker must not inherit unwritten output
  run_workers(opt.jobs, cb);
  publish();
  if (out.size() != props.size()) throw std::logic_error("run_in_workers: a property never completed");
  return out;
}

}  // namespace kparity::fuzz
