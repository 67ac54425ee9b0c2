// Importing Python arrays and Arrow data as joinery column views, without copies where the
// memory is already one contiguous buffer of a supported type.
#include "input_columns.hpp"

#include "arrow_c_interface.hpp"

#include <joinery/error.hpp>

#include <bit>
#include <cstdio>
#include <limits>
#include <memory>
#include <cstring>
#include <string_view>

namespace nb = nanobind;

namespace joinery::python {
namespace {

[[noreturn]] void refuse(std::string const& msg) { throw nb::value_error(msg.c_str()); }

std::string quoted(std::string const& name) { return name.empty() ? "a column" : "column '" + name + "'"; }

// What an Arrow format string names, for messages about types joinery does not take.
std::string describe_arrow_format(std::string_view f) {
  if (f == "u" || f == "U" || f == "vu") { return "string"; }
  if (f == "z" || f == "Z" || f == "vz") { return "binary"; }
  if (f == "b") { return "boolean"; }
  if (f == "e") { return "float16"; }
  if (f == "n") { return "null"; }
  if (f.starts_with("td")) { return "date"; }
  if (f.starts_with("ts")) { return "timestamp"; }
  if (f.starts_with("tt") || f.starts_with("tD") || f.starts_with("ti")) { return "time"; }
  if (f.starts_with("d:")) { return "decimal"; }
  if (f.starts_with("+s")) { return "struct"; }
  if (f.starts_with("+l") || f.starts_with("+L") || f.starts_with("+w")) { return "list"; }
  return "'" + std::string(f) + "'";
}

// The joinery type of an Arrow format, and how its values are read: Arrow's bit-packed
// booleans become bytes, and decimal128 values of at most 18 digits become decimal64 (their
// int64 low halves), which every aggregate takes.
struct arrow_type {
  type_id type = type_id::int32;
  decimal_format decimal{};
  bool unpack_bits = false;
  bool narrow_decimal = false;
};

arrow_type decimal_of_arrow_format(std::string_view f, std::string const& name) {
  // "d:precision,scale[,bit width]"
  int precision = 0, scale = 0, width = 128;
  std::string const spec(f.substr(2));
  char tail = 0;
  int const got = std::sscanf(spec.c_str(), "%d,%d,%d%c", &precision, &scale, &width, &tail);
  if (got < 2 || got > 3 || (width != 64 && width != 128) || precision < 1 ||
      precision > (width == 64 ? 18 : 38) || scale < 0 || scale > precision) {
    refuse(quoted(name) + " has Arrow type decimal '" + std::string(f) +
           "': joinery takes decimal64 and decimal128 with 0 <= scale <= precision");
  }
  arrow_type t;
  t.decimal = {static_cast<std::uint8_t>(precision), static_cast<std::int8_t>(scale)};
  t.narrow_decimal = width == 128 && precision <= 18;
  t.type = width == 64 || t.narrow_decimal ? type_id::decimal64 : type_id::decimal128;
  return t;
}

arrow_type type_of_arrow_format(std::string_view f, std::string const& name) {
  if (f.size() == 1) {
    switch (f[0]) {
      case 'c': return {type_id::int8};
      case 'C': return {type_id::uint8};
      case 's': return {type_id::int16};
      case 'S': return {type_id::uint16};
      case 'i': return {type_id::int32};
      case 'I': return {type_id::uint32};
      case 'l': return {type_id::int64};
      case 'L': return {type_id::uint64};
      case 'f': return {type_id::float32};
      case 'g': return {type_id::float64};
      case 'u': return {type_id::string};
      case 'U': return {type_id::large_string};
      case 'b': return {type_id::bool8, {}, true};
      default: break;
    }
  }
  if (f == "tdD") { return {type_id::date32}; }
  if (f.size() >= 4 && f.starts_with("ts") && f[3] == ':') {
    if (f.size() > 4) {
      refuse(quoted(name) + " is a timestamp with time zone '" + std::string(f.substr(4)) +
             "': joinery takes timestamps without one; cast it (pyarrow.compute.cast to "
             "timestamp('us')) first");
    }
    switch (f[2]) {
      case 's': return {type_id::timestamp_s};
      case 'm': return {type_id::timestamp_ms};
      case 'u': return {type_id::timestamp_us};
      case 'n': return {type_id::timestamp_ns};
      default: break;
    }
  }
  if (f.starts_with("d:")) { return decimal_of_arrow_format(f, name); }
  refuse(quoted(name) + " has Arrow type " + describe_arrow_format(f) +
         ": joinery takes integer (int8 .. uint64), float32 / float64, string (utf8, "
         "large_utf8), bool, date32, timestamp (s, ms, us, ns; without a time zone) and "
         "decimal columns" +
         (f == "vu" ? "; cast string_view to string first"
          : f == "tdm" ? "; cast date64 to date32 first" : ""));
}

// The struct a capsule carries, moved out: the capsule is left with a released struct, which
// is how the PyCapsule protocol hands ownership to the consumer.
template <class T>
T take_from_capsule(nb::capsule const& capsule, char const* expected) {
  char const* name = capsule.name();
  if (name == nullptr || std::strcmp(name, expected) != 0) {
    refuse(std::string("expected a PyCapsule named '") + expected + "', got '" +
           (name ? name : "") + "'");
  }
  auto* p = static_cast<T*>(PyCapsule_GetPointer(capsule.ptr(), expected));
  if (p == nullptr) { throw nb::python_error(); }
  if (p->release == nullptr) { refuse(std::string(expected) + " capsule was already consumed"); }
  T out = *p;
  p->release = nullptr;
  return out;
}

struct schema_owner {
  ArrowSchema schema{};
  ~schema_owner() {
    if (schema.release != nullptr) { schema.release(&schema); }
  }
};

struct array_owner {
  ArrowArray array{};
  std::vector<std::vector<std::uint8_t>> masks;  ///< validity bitmaps shifted to a byte boundary
  array_owner() = default;
  array_owner(array_owner const&) = delete;
  array_owner& operator=(array_owner const&) = delete;
  ~array_owner() {
    if (array.release != nullptr) { array.release(&array); }
  }
};

std::int64_t count_nulls(std::uint8_t const* validity, std::int64_t begin, std::int64_t rows) {
  std::int64_t valid = 0;
  for (std::int64_t i = begin; i < begin + rows; ++i) { valid += (validity[i >> 3] >> (i & 7)) & 1; }
  return rows - valid;
}

// A view over one primitive Arrow array: of its own rows, or, as the child of a struct (a record
// batch), of the struct's `rows` rows from the struct's offset `parent_offset` on. A validity
// bitmap is read in place when the view starts on a byte boundary, else shifted into a copy that
// `keep` holds.
column_view view_of_arrow(ArrowArray const& a, std::int64_t parent_offset, std::int64_t rows,
                          arrow_type const& arrow, std::string const& name,
                          std::vector<std::vector<std::uint8_t>>& keep) {
  auto const type = arrow.type;
  auto const buffers = is_string(type) ? 3 : 2;
  if (a.n_buffers != buffers || a.n_children != 0) {
    refuse(quoted(name) + ": an Arrow " + (is_string(type) ? "string" : "primitive") +
           " array has " + std::to_string(buffers) + " buffers and no children");
  }
  std::int64_t const begin = a.offset + parent_offset;
  auto const* validity = static_cast<std::uint8_t const*>(a.buffers[0]);
  std::uint8_t const* mask = nullptr;
  std::int64_t nulls = 0;
  if (a.null_count != 0 && validity != nullptr && rows > 0) {
    // The array's own count holds only when the view covers all of it.
    bool const whole = parent_offset == 0 && rows == a.length;
    nulls = whole && a.null_count > 0 ? a.null_count : count_nulls(validity, begin, rows);
    if (nulls > 0 && begin % 8 == 0) {
      mask = validity + begin / 8;
    } else if (nulls > 0) {
      auto& shifted = keep.emplace_back(null_mask_bytes(rows), std::uint8_t{0});
      for (std::int64_t i = 0; i < rows; ++i) {
        auto const j = begin + i;
        shifted[static_cast<std::size_t>(i >> 3)] |=
          static_cast<std::uint8_t>(((validity[j >> 3] >> (j & 7)) & 1) << (i & 7));
      }
      mask = shifted.data();
    }
  }
  if (is_string(type)) {
    // Offsets are read from the view's first row on; they index the whole character buffer.
    static constexpr std::int64_t no_offsets[1] = {0};
    auto const* offsets = static_cast<std::byte const*>(a.buffers[1]);
    if (offsets == nullptr && rows > 0) { refuse(quoted(name) + ": Arrow string array without offsets"); }
    auto const* chars = static_cast<char const*>(a.buffers[2]);
    return column_view::strings(
      type,
      offsets ? static_cast<void const*>(offsets + begin * static_cast<std::int64_t>(size_of(type)))
              : static_cast<void const*>(no_offsets),
      chars ? chars : "", rows, memory_space::host, mask, nulls);
  }
  if (rows == 0) {
    return column_view(type, nullptr, 0, memory_space::host).with_type(type, arrow.decimal);
  }
  auto const* data = static_cast<std::byte const*>(a.buffers[1]);
  if (data == nullptr) { refuse(quoted(name) + ": Arrow array without a data buffer"); }
  if (arrow.unpack_bits) {  // one byte per value
    auto& bytes = keep.emplace_back(static_cast<std::size_t>(rows));
    auto const* bits = reinterpret_cast<std::uint8_t const*>(data);
    for (std::int64_t i = 0; i < rows; ++i) {
      auto const j = begin + i;
      bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>((bits[j >> 3] >> (j & 7)) & 1);
    }
    return column_view(type, bytes.data(), rows, memory_space::host, mask, nulls);
  }
  if (arrow.narrow_decimal) {  // the low halves hold every value of at most 18 digits
    auto& low = keep.emplace_back(static_cast<std::size_t>(rows) * 8);
    for (std::int64_t i = 0; i < rows; ++i) {
      std::memcpy(low.data() + i * 8, data + (begin + i) * 16, 8);
    }
    return column_view(type, low.data(), rows, memory_space::host, mask, nulls)
      .with_type(type, arrow.decimal);
  }
  return column_view(type, data + begin * static_cast<std::int64_t>(size_of(type)), rows,
                     memory_space::host, mask, nulls)
    .with_type(type, arrow.decimal);
}

// The column of each child (a table) or of the array itself, over one imported batch.
struct batch_layout {
  std::vector<std::string> names;
  std::vector<arrow_type> types;
  bool is_table = false;
};

batch_layout layout_of(ArrowSchema const& schema) {
  batch_layout layout;
  std::string_view const format(schema.format ? schema.format : "");
  if (schema.dictionary != nullptr) {
    refuse(quoted(schema.name ? schema.name : "") +
           " is dictionary-encoded: decode it first (e.g. pyarrow.compute.cast)");
  }
  if (format == "+s") {
    layout.is_table = true;
    for (std::int64_t i = 0; i < schema.n_children; ++i) {
      ArrowSchema const& child = *schema.children[i];
      std::string name = child.name ? child.name : "";
      if (child.dictionary != nullptr) {
        refuse(quoted(name) + " is dictionary-encoded: decode it first (e.g. pyarrow.compute.cast)");
      }
      layout.types.push_back(type_of_arrow_format(child.format ? child.format : "", name));
      layout.names.push_back(std::move(name));
    }
  } else {
    std::string name = schema.name ? schema.name : "";
    layout.types.push_back(type_of_arrow_format(format, name));
    layout.names.push_back(std::move(name));
  }
  return layout;
}

// Views of every column of one batch (the batch must outlive them).
std::vector<column_view> views_of_batch(array_owner& owner, batch_layout const& layout) {
  ArrowArray const& batch = owner.array;
  std::vector<column_view> views;
  if (!layout.is_table) {
    views.push_back(
      view_of_arrow(batch, 0, batch.length, layout.types[0], layout.names[0], owner.masks));
    return views;
  }
  if (batch.n_children != static_cast<std::int64_t>(layout.types.size())) {
    refuse("an Arrow record batch does not have the columns its schema names");
  }
  auto const* struct_validity = batch.n_buffers > 0 ? static_cast<std::uint8_t const*>(batch.buffers[0]) : nullptr;
  if (batch.null_count != 0 && struct_validity != nullptr &&
      (batch.null_count > 0 || count_nulls(struct_validity, batch.offset, batch.length) > 0)) {
    refuse("an Arrow record batch with null rows cannot be read");
  }
  for (std::size_t i = 0; i < layout.types.size(); ++i) {
    ArrowArray const& child = *batch.children[i];
    if (child.length - batch.offset < batch.length) {
      refuse(quoted(layout.names[i]) + ": an Arrow struct child shorter than its struct");
    }
    // The struct's slice counts (a sliced batch shares its children whole).
    views.push_back(view_of_arrow(child, batch.offset, batch.length, layout.types[i],
                                  layout.names[i], owner.masks));
  }
  return views;
}

// One column of several chunks, gathered once into an owned host buffer.
// String chunks one after the other (large_string past 2^31 - 1 characters).
std::shared_ptr<column> concatenate_strings(type_id type, size_type rows,
                                            std::vector<column_view> const& chunks) {
  std::int64_t chars = 0;
  for (auto const& c : chunks) { chars += c.offset(c.size()) - c.offset(0); }
  if (chars > std::numeric_limits<std::int32_t>::max()) { type = type_id::large_string; }
  auto out = std::make_shared<column>(column::strings(type, rows, static_cast<std::size_t>(chars)));
  size_type row = 0;
  std::int64_t at = 0;
  auto set = [&](size_type i, std::int64_t v) {
    if (type == type_id::string) {
      static_cast<std::int32_t*>(out->data())[i] = static_cast<std::int32_t>(v);
    } else {
      static_cast<std::int64_t*>(out->data())[i] = v;
    }
  };
  for (auto const& c : chunks) {
    auto const first = c.offset(0);
    for (size_type i = 0; i < c.size(); ++i) { set(row + i, at + c.offset(i) - first); }
    auto const bytes = c.offset(c.size()) - first;
    if (bytes > 0) { std::memcpy(out->chars() + at, c.chars() + first, static_cast<std::size_t>(bytes)); }
    at += bytes;
    row += c.size();
  }
  set(rows, at);
  return out;
}

input_column gather_chunks(type_id type, std::vector<column_view> const& chunks) {
  size_type rows = 0;
  for (auto const& c : chunks) { rows += c.size(); }
  std::shared_ptr<column> gathered;
  if (is_string(type)) {
    gathered = concatenate_strings(type, rows, chunks);
  } else {
    gathered = std::make_shared<column>(type, rows);
    gathered->set_type(type, chunks.front().decimal());
    auto* out = static_cast<std::byte*>(gathered->data());
    for (auto const& c : chunks) {
      auto const bytes = static_cast<std::size_t>(c.size()) * size_of(type);
      if (bytes > 0) { std::memcpy(out, c.data(), bytes); }
      out += bytes;
    }
  }
  // Validity: the chunks' bits one after another (all valid where a chunk has no bitmap).
  size_type nulls = 0;
  for (auto const& c : chunks) { nulls += c.null_count(); }
  if (nulls > 0) {
    auto* mask = gathered->make_nullable();
    size_type row = 0;
    for (auto const& c : chunks) {
      for (size_type i = 0; c.nullable() && i < c.size(); ++i) {
        if (!c.is_valid(i)) {
          mask[(row + i) >> 3] &= static_cast<std::uint8_t>(~(1U << ((row + i) & 7)));
        }
      }
      row += c.size();
    }
    gathered->set_null_count(nulls);
  }
  input_column col;
  col.view = gathered->view();
  col.owner = gathered;
  col.chunks_gathered = static_cast<std::int64_t>(chunks.size());
  return col;
}

}  // namespace

input_column column_from_array(nb::ndarray<nb::ro> const& array, std::string const& name) {
  if (array.ndim() != 1) {
    refuse(quoted(name) + " has " + std::to_string(array.ndim()) + " dimensions: columns are 1-D arrays");
  }
  auto const dt = array.dtype();
  type_id type{};
  bool known = dt.lanes == 1;
  using code = nb::dlpack::dtype_code;
  if (dt.code == static_cast<std::uint8_t>(code::Int)) {
    type = dt.bits == 8 ? type_id::int8 : dt.bits == 16 ? type_id::int16 : dt.bits == 32 ? type_id::int32 : type_id::int64;
    known = known && (dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64);
  } else if (dt.code == static_cast<std::uint8_t>(code::UInt)) {
    type = dt.bits == 8 ? type_id::uint8 : dt.bits == 16 ? type_id::uint16 : dt.bits == 32 ? type_id::uint32 : type_id::uint64;
    known = known && (dt.bits == 8 || dt.bits == 16 || dt.bits == 32 || dt.bits == 64);
  } else if (dt.code == static_cast<std::uint8_t>(code::Float)) {
    type = dt.bits == 32 ? type_id::float32 : type_id::float64;
    known = known && (dt.bits == 32 || dt.bits == 64);
  } else {
    known = false;
  }
  if (!known) {
    refuse(quoted(name) + ": arrays of this element type are not supported; joinery takes " +
           "integer (int8 .. uint64) and float32 / float64 columns");
  }
  auto const rows = static_cast<size_type>(array.shape(0));
  if (rows > 1 && array.stride(0) != 1) {
    refuse(quoted(name) + " is a strided view (stride " + std::to_string(array.stride(0)) +
           " elements): joinery reads contiguous arrays in place; copy it first " +
           "(numpy.ascontiguousarray / cupy.ascontiguousarray)");
  }
  memory_space space = memory_space::host;
  int device = -1;
  if (array.device_type() == nb::device::cuda::value) {
    space = memory_space::device;
    device = array.device_id();
  } else if (array.device_type() == nb::device::cuda_host::value) {
    space = memory_space::pinned_host;
  } else if (array.device_type() != nb::device::cpu::value) {
    refuse(quoted(name) + ": arrays must live in host memory or on a CUDA device");
  }
  input_column col;
  col.view = column_view(type, rows > 0 ? array.data() : nullptr, rows, space);
  col.device = device;
  // The array object is released with the GIL held, from whichever thread drops the last owner.
  col.owner = std::shared_ptr<void>(new nb::ndarray<nb::ro>(array), [](void* p) {
    nb::gil_scoped_acquire gil;
    delete static_cast<nb::ndarray<nb::ro>*>(p);
  });
  return col;
}

named_columns columns_from_arrow_array(nb::capsule schema_capsule, nb::capsule array_capsule) {
  schema_owner schema{take_from_capsule<ArrowSchema>(schema_capsule, "arrow_schema")};
  auto batch = std::make_shared<array_owner>();
  batch->array = take_from_capsule<ArrowArray>(array_capsule, "arrow_array");
  auto const layout = layout_of(schema.schema);
  auto views = views_of_batch(*batch, layout);
  named_columns out;
  out.names = layout.names;
  out.is_table = layout.is_table;
  for (auto const& v : views) { out.columns.push_back(input_column{v, -1, batch, 0}); }
  return out;
}

named_columns columns_from_arrow_stream(nb::capsule stream_capsule) {
  struct stream_owner {
    ArrowArrayStream stream{};
    ~stream_owner() {
      if (stream.release != nullptr) { stream.release(&stream); }
    }
  } owner{take_from_capsule<ArrowArrayStream>(stream_capsule, "arrow_array_stream")};
  auto& stream = owner.stream;
  auto fail = [&](char const* what) {
    char const* detail = stream.get_last_error ? stream.get_last_error(&stream) : nullptr;
    refuse(std::string("reading an Arrow stream: ") + what + (detail ? std::string(": ") + detail : ""));
  };
  schema_owner schema;
  if (stream.get_schema(&stream, &schema.schema) != 0) { fail("get_schema failed"); }
  auto const layout = layout_of(schema.schema);
  std::vector<std::shared_ptr<array_owner>> batches;
  std::vector<std::vector<column_view>> chunks(layout.types.size());
  for (;;) {
    auto batch = std::make_shared<array_owner>();
    if (stream.get_next(&stream, &batch->array) != 0) { fail("get_next failed"); }
    if (batch->array.release == nullptr) { break; }  // the end of the stream
    auto views = views_of_batch(*batch, layout);
    if (batch->array.length == 0) { continue; }
    for (std::size_t i = 0; i < views.size(); ++i) { chunks[i].push_back(views[i]); }
    batches.push_back(std::move(batch));
  }
  named_columns out;
  out.names = layout.names;
  out.is_table = layout.is_table;
  std::shared_ptr<void> all_batches =
    std::make_shared<std::vector<std::shared_ptr<array_owner>>>(std::move(batches));
  for (std::size_t i = 0; i < layout.types.size(); ++i) {
    auto const type = layout.types[i].type;
    if (chunks[i].empty() && is_string(type)) {
      static constexpr std::int64_t no_offsets[1] = {0};
      out.columns.push_back(input_column{
        column_view::strings(type, no_offsets, "", 0, memory_space::host), -1, nullptr, 0});
    } else if (chunks[i].empty()) {
      out.columns.push_back(input_column{
        column_view(type, nullptr, 0, memory_space::host).with_type(type, layout.types[i].decimal),
        -1, nullptr, 0});
    } else if (chunks[i].size() == 1) {
      out.columns.push_back(input_column{chunks[i].front(), -1, all_batches, 0});
    } else {
      out.columns.push_back(gather_chunks(type, chunks[i]));
    }
  }
  return out;
}

}  // namespace joinery::python
