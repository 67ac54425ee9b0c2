// The joinery._native extension: joins and group-bys over imported columns, run with the GIL
// released on a worker thread so that Ctrl-C returns control to Python.
#include "input_columns.hpp"
#include "result_columns.hpp"

#include <joinery/cancel.hpp>
#include <joinery/error.hpp>
#include <joinery/groupby.hpp>
#include <joinery/join.hpp>
#include <joinery/memory.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>
#include <type_traits>

namespace nb = nanobind;
using namespace nb::literals;

namespace joinery::python {
namespace {

// Worker threads that outlive calls: a CUDA-using thread costs about a millisecond to start and
// end (its per-thread stream and context state), which a call per thread would pay each time.
// Threads are added when every one is busy (a call abandoned by Ctrl-C keeps its thread until it
// finishes) and are never destroyed (the pool is leaked on purpose: they may outlive main()).
class worker_pool {
 public:
  static worker_pool& instance() {
    static auto* pool = new worker_pool();
    return *pool;
  }
  /// Calls queued or running, abandoned ones included.
  std::size_t busy() {
    std::lock_guard lock(mutex_);
    return busy_;
  }
  /// Cancels every queued or running call and waits up to `seconds` for them to stop: at
  /// interpreter exit (a process that ends while a worker is inside a parallel region aborts).
  bool cancel_all_and_wait(double seconds) {
    std::unique_lock lock(mutex_);
    for (auto* flag : cancel_flags_) { flag->store(true); }
    return idle_signal_.wait_for(lock, std::chrono::duration<double>(seconds),
                                 [&] { return busy_ == 0; });
  }
  void add_flag(std::atomic<bool>* flag) {
    std::lock_guard lock(mutex_);
    cancel_flags_.push_back(flag);
  }
  void remove_flag(std::atomic<bool>* flag) {
    std::lock_guard lock(mutex_);
    std::erase(cancel_flags_, flag);
  }
  void submit(std::function<void()> task) {
    std::lock_guard lock(mutex_);
    ++busy_;
    tasks_.push_back(std::move(task));
    if (tasks_.size() > idle_) { std::thread([this] { work(); }).detach(); }
    else { wake_.notify_one(); }
  }

 private:
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      wake_.wait(lock, [&] { return !tasks_.empty(); });
      --idle_;
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      if (--busy_ == 0) { idle_signal_.notify_all(); }
    }
  }
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::condition_variable idle_signal_;
  std::vector<std::atomic<bool>*> cancel_flags_;  // of the calls queued or running
  std::size_t idle_ = 0;
  std::size_t busy_ = 0;
};

// Calls abandoned by Ctrl-C, kept until a later call's thread, which holds the GIL, releases
// them: a worker thread never drops Python objects itself (waiting for the GIL at interpreter
// exit ends a thread by forced unwinding, which aborts the process). Left at exit, they leak.
class abandoned_calls {
 public:
  static void keep(std::shared_ptr<void> call) {
    std::lock_guard lock(mutex());
    list().push_back(std::move(call));
  }
  static void release() {  // the GIL held
    std::vector<std::shared_ptr<void>> done;
    {
      std::lock_guard lock(mutex());
      done.swap(list());
    }
  }

 private:
  static std::mutex& mutex() {
    static auto* m = new std::mutex();
    return *m;
  }
  static std::vector<std::shared_ptr<void>>& list() {
    static auto* l = new std::vector<std::shared_ptr<void>>();
    return *l;
  }
};

// Runs `task` on a pool thread while this thread, the GIL released, waits in short steps and
// checks for signals between them. On Ctrl-C the caller gets KeyboardInterrupt at once and the
// call is cancelled: the worker stops at the library's next check between phases
// (joinery/cancel.hpp). The inputs the task owns are released by this thread (the GIL held) or,
// for an abandoned call, by a later call's thread.
template <class Task>
auto run_interruptible(Task task) -> decltype(task()) {
  using result_type = decltype(task());
  struct shared_state {
    std::mutex mutex;
    std::condition_variable done_signal;
    bool done = false;
    bool abandoned = false;
    std::optional<result_type> result;
    std::exception_ptr error;
    std::atomic<bool> cancel{false};
    std::optional<Task> task;
  };
  abandoned_calls::release();
  auto state = std::make_shared<shared_state>();
  state->task.emplace(std::move(task));
  worker_pool::instance().add_flag(&state->cancel);
  worker_pool::instance().submit([state]() mutable {
    try {
      cancellation_scope scope(state->cancel);
      state->result.emplace((*state->task)());
    } catch (...) {
      state->error = std::current_exception();
    }
    worker_pool::instance().remove_flag(&state->cancel);
    bool abandoned = false;
    {
      std::lock_guard lock(state->mutex);
      state->done = true;
      abandoned = state->abandoned;
    }
    state->done_signal.notify_all();
    if (abandoned) {  // its result is freed now; its inputs wait for a thread holding the GIL
      state->result.reset();
      state->error = nullptr;
      abandoned_calls::keep(std::move(state));
    }
  });
  for (;;) {
    bool done = false;
    {
      nb::gil_scoped_release no_gil;
      std::unique_lock lock(state->mutex);
      done = state->done_signal.wait_for(lock, std::chrono::milliseconds(50),
                                         [&] { return state->done; });
    }
    if (done) { break; }
    if (PyErr_CheckSignals() != 0) {
      state->cancel.store(true);
      std::unique_lock lock(state->mutex);
      if (!state->done) {
        state->abandoned = true;
        throw nb::python_error();
      }
      lock.unlock();
      state->task.reset();
      throw nb::python_error();
    }
  }
  state->task.reset();  // the inputs, released with the GIL held
  if (state->error) { std::rethrow_exception(state->error); }
  return std::move(*state->result);
}

std::string internal_name(std::string const& name) { return name == "auto" ? "automatic" : name; }

std::vector<column_view> views_of(std::vector<input_column> const& cols) {
  std::vector<column_view> views;
  views.reserve(cols.size());
  for (auto const& c : cols) { views.push_back(c.view); }
  return views;
}

// The device of device-resident inputs (all must agree), or `fallback`.
int device_of(std::vector<input_column> const& a, std::vector<input_column> const& b, int fallback) {
  std::optional<int> found;
  for (auto const* side : {&a, &b}) {
    for (auto const& c : *side) {
      if (c.device < 0) { continue; }
      if (found && *found != c.device) {
        throw nb::value_error("device arrays on different GPUs cannot be joined in one call");
      }
      found = c.device;
    }
  }
  return found.value_or(fallback);
}

std::shared_ptr<column> share(column&& c) { return std::make_shared<column>(std::move(c)); }

struct join_request {
  std::vector<input_column> left, right;  // left: the probe side, right: the build side
  std::vector<size_type> left_keys, right_keys;
  join_options options;
  std::vector<type_id> result_types;  // of the table form's columns, as handed out
};

// A join only moves payload values, so float payloads cross it as the bits of same-width
// unsigned integers (the library's joins take integer payloads) and are handed back as floats.
std::vector<type_id> carry_floats_as_bits(std::vector<input_column>& side,
                                          std::vector<size_type> const& payloads) {
  std::vector<type_id> types;
  for (auto p : payloads) {
    if (p < 0 || p >= static_cast<size_type>(side.size())) {
      throw nb::index_error("payload column index out of range");
    }
    auto& v = side[static_cast<std::size_t>(p)].view;
    types.push_back(v.type());
    if (is_floating(v.type())) {
      auto const bits = v.type() == type_id::float32 ? type_id::uint32 : type_id::uint64;
      v = column_view(bits, v.data(), v.size(), v.space(), v.null_mask(), v.null_count());
    }
  }
  return types;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

result_columns run_join(join_request const& request) {
  auto const t0 = std::chrono::steady_clock::now();
  auto result = join(table_view(views_of(request.right)), request.right_keys,
                     table_view(views_of(request.left)), request.left_keys, request.options);
  double const call_seconds = seconds_since(t0);
  result_columns out;
  out.device = request.options.device;
  if (result.form == output_form::index) {
    out.columns.push_back(share(std::move(result.probe_rows)));
    auto const k = request.options.kind;
    if (k == join_kind::inner || k == join_kind::left_outer || k == join_kind::right_outer ||
        k == join_kind::full_outer) {
      out.columns.push_back(share(std::move(result.build_rows)));
    }
  } else {
    for (auto& c : result.columns.release()) { out.columns.push_back(share(std::move(c))); }
    if (!request.result_types.empty()) {
      if (request.result_types.size() != out.columns.size()) {
        throw logic_error("a join returned " + std::to_string(out.columns.size()) +
                          " columns where " + std::to_string(request.result_types.size()) +
                          " were asked for");
      }
      out.types = request.result_types;
      for (std::size_t i = 0; i < out.types.size(); ++i) {  // strings widen to large_string
        if (is_string(out.columns[i]->type())) { out.types[i] = out.columns[i]->type(); }
      }
    }
  }
  auto const& s = result.stats;
  out.stats = {std::string(to_string(s.algorithm)), std::string(to_string(s.backend)),
               result.form == output_form::table ? std::string(to_string(s.strategy)) : "",
               s.seconds, call_seconds, s.bytes_moved, {}};
  for (auto const& p : s.phases) { out.stats.phases.emplace_back(p.name, p.seconds); }
  return out;
}

result_columns join_columns(std::vector<input_column> left, std::vector<size_type> left_keys,
                            std::vector<input_column> right, std::vector<size_type> right_keys,
                            std::string const& how, std::string const& output,
                            std::vector<size_type> left_payloads,
                            std::vector<size_type> right_payloads, std::string const& algorithm,
                            std::string const& backend_name, std::string const& strategy,
                            std::optional<std::uint64_t> device_budget, int device,
                            std::string const& index_type, bool nulls_equal) {
  join_request request;
  auto& o = request.options;
  o.kind = how == "inner"                    ? join_kind::inner
           : how == "left"                   ? join_kind::left_outer
           : how == "right"                  ? join_kind::right_outer
           : how == "full" || how == "outer" ? join_kind::full_outer
           : how == "semi"                   ? join_kind::left_semi
           : how == "anti"                   ? join_kind::left_anti
             : throw nb::value_error(("how must be 'inner', 'left', 'right', 'full', 'outer', "
                                      "'semi' or 'anti', got '" + how + "'").c_str());
  o.nulls = nulls_equal ? null_equality::equal : null_equality::unequal;
  for (auto const* keys : {&left_keys, &right_keys}) {
    for (auto k : *keys) {
      if (k < 0 || k >= static_cast<size_type>((keys == &left_keys ? left : right).size())) {
        throw nb::index_error("key column index out of range");
      }
    }
  }
  if (output != "table" && output != "index") {
    throw nb::value_error(("output must be 'table' or 'index', got '" + output + "'").c_str());
  }
  o.output = output == "table" ? output_form::table : output_form::index;
  o.algorithm = join_algorithm_from_string(internal_name(algorithm));
  o.backend = backend_from_string(backend_name);
  o.strategy = materialization_from_string(internal_name(strategy));
  o.probe_payloads = std::move(left_payloads);
  o.build_payloads = std::move(right_payloads);
  if (o.kind == join_kind::left_semi || o.kind == join_kind::left_anti) {
    o.build_payloads.clear();  // semi / anti joins return left columns only
  }
  o.device_memory_budget = device_budget.value_or(0);
  o.device = device_of(left, right, device);
  o.index_type = type_from_string(index_type);
  if (o.output == output_form::table) {
    auto const left_types = carry_floats_as_bits(left, o.probe_payloads);
    auto const right_types = carry_floats_as_bits(right, o.build_payloads);
    // The library's order: key, build (right) payloads, probe (left) payloads.
    for (auto k : left_keys) {
      request.result_types.push_back(left[static_cast<std::size_t>(k)].view.type());
    }
    request.result_types.insert(request.result_types.end(), right_types.begin(), right_types.end());
    request.result_types.insert(request.result_types.end(), left_types.begin(), left_types.end());
  }
  request.left = std::move(left);
  request.right = std::move(right);
  request.left_keys = std::move(left_keys);
  request.right_keys = std::move(right_keys);
  return run_interruptible([request = std::move(request)] { return run_join(request); });
}

result_columns group_by_columns(std::vector<input_column> input, std::vector<size_type> keys,
                                std::vector<std::pair<std::string, size_type>> const& aggs,
                                std::string const& algorithm, std::string const& backend_name,
                                bool sort, std::optional<std::uint64_t> device_budget,
                                int device) {
  std::vector<aggregation> aggregations;
  for (auto k : keys) {
    if (k < 0 || k >= static_cast<size_type>(input.size())) {
      throw nb::index_error("key column index out of range");
    }
  }
  for (auto const& [kind, column_index] : aggs) {
    if (column_index < 0 || column_index >= static_cast<size_type>(input.size())) {
      throw nb::index_error("aggregated column index out of range");
    }
    // pandas' and polars' names: count counts non-NULL values, size / len the rows.
    auto const k = kind == "mean"                   ? aggregation_kind::avg
                   : kind == "count"                ? aggregation_kind::count_valid
                   : kind == "size" || kind == "len" ? aggregation_kind::count
                   : kind == "n_unique" || kind == "nunique" ? aggregation_kind::count_distinct
                                                    : aggregation_kind_from_string(kind);
    aggregations.push_back({k, k == aggregation_kind::count ? size_type{-1} : column_index});
  }
  groupby_options o;
  o.algorithm = groupby_algorithm_from_string(internal_name(algorithm));
  o.backend = backend_from_string(backend_name);
  o.sort_by_key = sort;
  o.device_memory_budget = device_budget.value_or(0);
  o.device = device_of(input, {}, device);
  return run_interruptible([input = std::move(input), keys, aggregations, o] {
    auto const t0 = std::chrono::steady_clock::now();
    auto result = groupby(table_view(views_of(input)), keys, aggregations, o);
    double const call_seconds = seconds_since(t0);
    result_columns out;
    out.device = o.device;
    for (auto& c : result.columns.release()) { out.columns.push_back(share(std::move(c))); }
    auto const& s = result.stats;
    out.stats = {std::string(to_string(s.algorithm)), std::string(to_string(s.backend)), "",
                 s.seconds, call_seconds, s.bytes_moved, {}};
    for (auto const& p : s.phases) { out.stats.phases.emplace_back(p.name, p.seconds); }
    return out;
  });
}

void translate_exceptions(std::exception_ptr const& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (out_of_memory const& e) {
    PyErr_SetString(PyExc_MemoryError, e.what());
  } catch (overflow_error const& e) {
    PyErr_SetString(PyExc_OverflowError, e.what());
  } catch (cancelled const& e) {
    PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
  } catch (cuda_error const& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  } catch (logic_error const& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (input_error const& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  }
}

}  // namespace
}  // namespace joinery::python

NB_MODULE(_native, m) {
  using namespace joinery::python;
  m.doc() = "joinery's compiled core; use the functions of the joinery package";
  nb::register_exception_translator(translate_exceptions);

  nb::class_<input_column>(m, "InputColumn")
    .def_prop_ro("type", [](input_column const& c) { return std::string(joinery::to_string(c.view.type())); })
    .def_prop_ro("rows", [](input_column const& c) { return c.view.size(); })
    .def_prop_ro("address", [](input_column const& c) { return reinterpret_cast<std::uintptr_t>(c.view.data()); },
                 "address of the first row joinery reads (proves a zero-copy import)")
    .def_prop_ro("device", [](input_column const& c) { return c.device; })
    .def_prop_ro("chunks_gathered", [](input_column const& c) { return c.chunks_gathered; });

  nb::class_<named_columns>(m, "NamedColumns")
    .def_ro("names", &named_columns::names)
    .def_ro("columns", &named_columns::columns)
    .def_ro("is_table", &named_columns::is_table);

  nb::class_<result_columns>(m, "ResultColumns")
    .def("__len__", &result_columns::size)
    .def("on_device", &result_columns::on_device)
    .def("is_string", [](result_columns const& r, std::size_t i) { return is_string(r.at(i).type()); })
    // Strings, bool, dates, timestamps and decimals reach NumPy and pandas through Arrow.
    .def("is_arrow_only", [](result_columns const& r, std::size_t i) {
      return is_string(r.at(i).type()) || is_logical(r.at(i).type());
    })
    .def("null_count", &result_columns::null_count)
    .def("arrow_capsules", &result_columns::arrow_capsules)
    .def("array", &result_columns::array)
    .def("validity", &result_columns::validity)
    .def("address", [](result_columns const& r, std::size_t i) {
      return reinterpret_cast<std::uintptr_t>(r.at(i).view().data());
    }, "address of the column's data (exports hand out this memory, not a copy)")
    .def_prop_ro("stats", &result_columns::stats_dict);

  m.def("column_from_array", &column_from_array, "array"_a.noconvert(), "name"_a);
  m.def("columns_from_arrow_array", &columns_from_arrow_array, "schema"_a, "array"_a);
  m.def("columns_from_arrow_stream", &columns_from_arrow_stream, "stream"_a);
  m.def("join", &join_columns, "left"_a, "left_keys"_a, "right"_a, "right_keys"_a, "how"_a,
        "output"_a, "left_payloads"_a, "right_payloads"_a, "algorithm"_a, "backend"_a,
        "strategy"_a, "device_budget"_a.none(), "device"_a, "index_type"_a, "nulls_equal"_a);
  m.def("group_by", &group_by_columns, "input"_a, "keys"_a, "aggs"_a, "algorithm"_a, "backend"_a,
        "sort"_a, "device_budget"_a.none(), "device"_a);
  m.def("device_count", [] { return joinery::device_count(); });
  m.def("busy_calls", [] { return worker_pool::instance().busy(); },
        "calls queued or running on the worker threads, those abandoned by Ctrl-C included");
  m.def("cancel_all_and_wait", [](double seconds) {
    nb::gil_scoped_release no_gil;
    return worker_pool::instance().cancel_all_and_wait(seconds);
  }, "seconds"_a, "cancels every running call and waits for them to stop (at exit)");
  m.def("join_algorithms", [](std::string const& backend_name) {
    std::vector<std::string> names;
    for (auto a : joinery::join_algorithms_on(joinery::backend_from_string(backend_name))) {
      names.emplace_back(joinery::to_string(a));
    }
    return names;
  });
  m.def("group_by_algorithms", [](std::string const& backend_name) {
    std::vector<std::string> names;
    for (auto a : joinery::groupby_algorithms_on(joinery::backend_from_string(backend_name))) {
      names.emplace_back(joinery::to_string(a));
    }
    return names;
  });
}
