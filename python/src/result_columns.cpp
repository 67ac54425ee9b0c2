// Exports of owned result columns: Arrow C data interface capsules and DLPack arrays.
#include "result_columns.hpp"

#include "arrow_c_interface.hpp"

#include <cstring>
#include <string>
#include <vector>

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

namespace nb = nanobind;

namespace joinery::python {
namespace {

std::string arrow_format(column_view const& c, type_id t) {
  if (is_decimal(t)) {  // decimal64 goes out as decimal128 (what every Arrow reader takes)
    return "d:" + std::to_string(c.decimal().precision) + "," + std::to_string(c.decimal().scale);
  }
  switch (t) {
    case type_id::int8: return "c";
    case type_id::uint8: return "C";
    case type_id::int16: return "s";
    case type_id::uint16: return "S";
    case type_id::int32: return "i";
    case type_id::uint32: return "I";
    case type_id::int64: return "l";
    case type_id::uint64: return "L";
    case type_id::float32: return "f";
    case type_id::float64: return "g";
    case type_id::string: return "u";
    case type_id::large_string: return "U";
    case type_id::bool8: return "b";
    case type_id::date32: return "tdD";
    case type_id::timestamp_s: return "tss:";
    case type_id::timestamp_ms: return "tsm:";
    case type_id::timestamp_us: return "tsu:";
    case type_id::timestamp_ns: return "tsn:";
    default: break;
  }
  return "";
}

nb::dlpack::dtype dlpack_dtype(type_id t) {
  using code = nb::dlpack::dtype_code;
  auto const bits = static_cast<std::uint8_t>(size_of(t) * 8);
  auto const c = is_floating(t) ? code::Float : is_signed(t) ? code::Int : code::UInt;
  return nb::dlpack::dtype{static_cast<std::uint8_t>(c), bits, 1};
}

// Owns what an exported ArrowArray points into: the column, or the values in Arrow's layout
// where it differs (booleans packed into bits, decimal64 widened to decimal128).
struct exported_array {
  std::shared_ptr<column> owner;
  std::vector<std::uint8_t> converted;
  void const* buffers[3] = {nullptr, nullptr, nullptr};
};

void release_schema(ArrowSchema* s) {
  delete static_cast<std::string*>(s->private_data);
  s->release = nullptr;
}

/// The values of `view` in Arrow's layout, when it is not joinery's.
bool convert_for_arrow(column_view const& view, std::vector<std::uint8_t>& out) {
  auto const n = static_cast<std::size_t>(view.size());
  if (view.type() == type_id::bool8) {
    out.assign((n + 7) / 8, 0);
    auto const* v = static_cast<std::uint8_t const*>(view.data());
    for (std::size_t i = 0; i < n; ++i) {
      out[i >> 3] = static_cast<std::uint8_t>(out[i >> 3] | ((v[i] != 0 ? 1U : 0U) << (i & 7)));
    }
    return true;
  }
  if (view.type() == type_id::decimal64) {
    out.assign(n * 16, 0);
    auto const* v = static_cast<std::int64_t const*>(view.data());
    for (std::size_t i = 0; i < n; ++i) {
      auto const wide = static_cast<__int128>(v[i]);
      std::memcpy(out.data() + i * 16, &wide, 16);
    }
    return true;
  }
  return false;
}

void release_array(ArrowArray* a) {
  delete static_cast<exported_array*>(a->private_data);
  a->release = nullptr;
}

// A capsule that frees its struct, releasing it first when no consumer took it.
template <class T>
nb::capsule capsule_of(T* p, char const* name) {
  return nb::capsule(p, name, [](void* q) noexcept {
    auto* s = static_cast<T*>(q);
    if (s->release != nullptr) { s->release(s); }
    delete s;
  });
}

nb::object array_over(void* data, std::size_t rows, nb::dlpack::dtype dtype, bool device,
                      int device_id, std::shared_ptr<column> const& owner) {
  auto* keep = new std::shared_ptr<column>(owner);
  nb::capsule keeper(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<column>*>(p); });
  std::size_t shape[1] = {rows};
  if (device) {
    return nb::ndarray<nb::cupy>(data, 1, shape, keeper, nullptr, dtype, nb::device::cuda::value,
                                 device_id)
      .cast();
  }
  return nb::ndarray<nb::numpy>(data, 1, shape, keeper, nullptr, dtype, nb::device::cpu::value)
    .cast();
}

}  // namespace

column const& result_columns::at(std::size_t i) const {
  if (i >= columns.size()) { throw nb::index_error("result column index out of range"); }
  return *columns[i];
}

nb::tuple result_columns::arrow_capsules(std::size_t i) const {
  // Arrow inputs are host-resident and a table's columns share one memory, so a bool, date,
  // timestamp or decimal result is in host memory; a device column goes out through CuPy.
  auto const& owner = columns[i];
  if (!host_accessible(owner->space())) {
    throw nb::value_error("the result is in device memory: ask for result='cupy'");
  }
  auto const view = owner->view();
  auto* schema = new ArrowSchema{};
  auto* format = new std::string(arrow_format(view, type(i)));
  schema->private_data = format;
  schema->format = format->c_str();
  schema->name = "";
  schema->flags = view.nullable() ? ARROW_FLAG_NULLABLE : 0;
  schema->release = release_schema;
  auto* exported = new exported_array{owner, {}, {}};
  exported->buffers[0] = view.null_count() > 0 ? view.null_mask() : nullptr;
  exported->buffers[1] = convert_for_arrow(view, exported->converted)
                          ? static_cast<void const*>(exported->converted.data())
                          : view.data();
  exported->buffers[2] = view.chars();
  auto* array = new ArrowArray{};
  array->length = view.size();
  array->null_count = view.null_count();
  array->n_buffers = is_string(view.type()) ? 3 : 2;
  array->buffers = exported->buffers;
  array->release = release_array;
  array->private_data = exported;
  return nb::make_tuple(capsule_of(schema, "arrow_schema"), capsule_of(array, "arrow_array"));
}

nb::object result_columns::array(std::size_t i) const {
  auto const& col = at(i);
  if (is_string(col.type()) || is_logical(col.type())) {
    throw nb::type_error(("a " + std::string(to_string(col.type())) +
                          " column has no DLPack form: read it through Arrow")
                           .c_str());
  }
  return array_over(const_cast<void*>(col.view().data()), static_cast<std::size_t>(col.size()),
                    dlpack_dtype(type(i)), on_device(i), device, columns[i]);
}

nb::object result_columns::validity(std::size_t i) const {
  auto const view = at(i).view();
  if (view.null_count() == 0) { return nb::none(); }
  return array_over(const_cast<std::uint8_t*>(view.null_mask()), null_mask_bytes(view.size()),
                    nb::dlpack::dtype{static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt), 8, 1},
                    on_device(i), device, columns[i]);
}

nb::dict result_columns::stats_dict() const {
  nb::dict d;
  d["algorithm"] = stats.algorithm;
  d["backend"] = stats.backend;
  if (!stats.strategy.empty()) { d["strategy"] = stats.strategy; }
  d["seconds"] = stats.seconds;
  d["call_seconds"] = stats.call_seconds;
  d["bytes_moved"] = stats.bytes_moved;
  nb::dict phases;
  for (auto const& [name, seconds] : stats.phases) {  // repeated phases (per chunk) add up
    double const before = phases.contains(name.c_str()) ? nb::cast<double>(phases[name.c_str()]) : 0.0;
    phases[name.c_str()] = before + seconds;
  }
  d["phases"] = phases;
  return d;
}

}  // namespace joinery::python
