#pragma once
// Columns: non-owning views and owning columns that know their memory space.
#include <joinery/memory.hpp>
#include <joinery/types.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace joinery {

/// Validity bitmask: bit i of byte i/8 (LSB first, as Arrow) is 1 when row i is valid.
/// A null mask pointer means every row is valid.
class column_view {
 public:
  column_view() = default;
  column_view(type_id type, void const* data, size_type size, memory_space space,
              std::uint8_t const* null_mask = nullptr, size_type null_count = 0)
      : type_(type), data_(data), size_(size), space_(space), null_mask_(null_mask),
        null_count_(null_count),
        decimal_(type == type_id::decimal128 ? decimal_format{38, 0} : decimal_format{}) {
    JOINERY_EXPECTS(size >= 0, "column size must not be negative");
    JOINERY_EXPECTS(size == 0 || data != nullptr, "a non-empty column needs data");
    JOINERY_EXPECTS(!is_string(type), "string columns are made with column_view::strings");
  }
  /// A string column in Arrow's layout: `offsets` (int32 for string, int64 for large_string)
  /// holds size + 1 entries, row i being chars[offsets[i], offsets[i + 1]); the first offset
  /// need not be 0 (a slice of a larger array).
  static column_view strings(type_id type, void const* offsets, char const* chars, size_type size,
                             memory_space space, std::uint8_t const* null_mask = nullptr,
                             size_type null_count = 0) {
    JOINERY_EXPECTS(is_string(type), "column_view::strings takes string or large_string, not " +
                                       std::string(to_string(type)));
    JOINERY_EXPECTS(size >= 0, "column size must not be negative");
    JOINERY_EXPECTS(offsets != nullptr, "a string column needs its size + 1 offsets");
    column_view v;
    v.type_ = type;
    v.data_ = offsets;
    v.chars_ = chars;
    v.size_ = size;
    v.space_ = space;
    v.null_mask_ = null_mask;
    v.null_count_ = null_count;
    return v;
  }
  /// A host column over a std::vector (the vector must outlive the view).
  template <class T>
  static column_view of(std::vector<T> const& v) {
    return column_view(type_to_id_v<T>, v.data(), static_cast<size_type>(v.size()),
                       memory_space::host);
  }

  [[nodiscard]] type_id type() const noexcept { return type_; }
  /// Decimal columns: precision and scale (value = stored integer * 10^-scale).
  [[nodiscard]] decimal_format decimal() const noexcept { return decimal_; }
  /// The same data read as another fixed-width type of the same width (a date32 column as its
  /// int32 storage, or back), with `decimal` for a decimal type.
  [[nodiscard]] column_view with_type(type_id type, decimal_format decimal = {}) const {
    JOINERY_EXPECTS(!is_string(type) && !is_string(type_) && size_of(type) == size_of(type_),
                    "a " + std::string(to_string(type_)) + " column cannot be read as " +
                      std::string(to_string(type)));
    auto v = *this;
    v.type_ = type;
    v.decimal_ = is_decimal(type) ? decimal : decimal_format{};
    return v;
  }
  [[nodiscard]] void const* data() const noexcept { return data_; }
  template <class T>
  [[nodiscard]] T const* data_as() const {
    JOINERY_EXPECTS(type_to_id_v<T> == type_, "column accessed as " +
                                                  std::string(to_string(type_to_id_v<T>)) +
                                                  " but holds " + std::string(to_string(type_)));
    return static_cast<T const*>(data_);
  }
  [[nodiscard]] size_type size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] memory_space space() const noexcept { return space_; }
  [[nodiscard]] std::uint8_t const* null_mask() const noexcept { return null_mask_; }
  [[nodiscard]] size_type null_count() const noexcept { return null_mask_ ? null_count_ : 0; }
  [[nodiscard]] bool nullable() const noexcept { return null_mask_ != nullptr; }
  /// Host-accessible columns only.
  [[nodiscard]] bool is_valid(size_type i) const noexcept {
    return null_mask_ == nullptr || ((null_mask_[i >> 3] >> (i & 7)) & 1u) != 0;
  }
  /// String columns: the characters the offsets (data()) index.
  [[nodiscard]] char const* chars() const noexcept { return chars_; }
  /// Host-accessible string columns only: offset i (0 <= i <= size) and row i's characters.
  [[nodiscard]] std::int64_t offset(size_type i) const noexcept {
    return type_ == type_id::string ? static_cast<std::int32_t const*>(data_)[i]
                                    : static_cast<std::int64_t const*>(data_)[i];
  }
  [[nodiscard]] std::string_view string_at(size_type i) const noexcept {
    auto const b = offset(i);
    return {chars_ + b, static_cast<std::size_t>(offset(i + 1) - b)};
  }

 private:
  type_id type_ = type_id::int32;
  void const* data_ = nullptr;
  size_type size_ = 0;
  memory_space space_ = memory_space::host;
  std::uint8_t const* null_mask_ = nullptr;
  size_type null_count_ = 0;
  char const* chars_ = nullptr;
  decimal_format decimal_{};
  friend class column;
};

/// Bytes of a validity mask for `rows` rows.
constexpr std::size_t null_mask_bytes(size_type rows) noexcept {
  return static_cast<std::size_t>((rows + 7) / 8);
}

/// Owning column: data (and optionally a validity mask) in one memory space.
class column {
 public:
  column() = default;
  /// Uninitialised column of `size` rows from `mr` (nullptr: host).
  column(type_id type, size_type size, memory_resource* mr = nullptr,
         stream_ref stream = default_stream());
  template <class T>
  static column from_host(std::vector<T> const& v, memory_resource* mr = nullptr,
                          stream_ref stream = default_stream()) {
    return copy_of(column_view::of(v), mr, stream);
  }
  /// An uninitialised string column: size + 1 offsets and `chars` bytes of characters.
  static column strings(type_id type, size_type size, std::size_t chars,
                        memory_resource* mr = nullptr, stream_ref stream = default_stream());
  /// Deep copy of `v` into the space of `mr` (nullptr: host), the mask included (a string
  /// column's offsets rebased to start at 0).
  static column copy_of(column_view const& v, memory_resource* mr = nullptr,
                        stream_ref stream = default_stream());

  [[nodiscard]] column_view view() const noexcept;
  operator column_view() const noexcept { return view(); }  // NOLINT: views are cheap
  [[nodiscard]] type_id type() const noexcept { return type_; }
  [[nodiscard]] decimal_format decimal() const noexcept { return decimal_; }
  /// Gives the column another fixed-width type of the same width (see column_view::with_type).
  void set_type(type_id type, decimal_format decimal = {});
  [[nodiscard]] size_type size() const noexcept { return size_; }
  [[nodiscard]] memory_space space() const noexcept { return data_.space(); }
  /// The resource the column was allocated from.
  [[nodiscard]] memory_resource* resource() const noexcept { return data_.resource(); }
  [[nodiscard]] void* data() noexcept { return data_.data(); }
  template <class T>
  [[nodiscard]] T* data_as() {
    JOINERY_EXPECTS(type_to_id_v<T> == type_, "column accessed with the wrong type");
    return static_cast<T*>(data_.data());
  }
  /// Adds an all-valid mask in the column's space (any space) and returns it.
  std::uint8_t* make_nullable();
  /// String columns: the characters (data() holds the offsets).
  [[nodiscard]] char* chars() noexcept { return static_cast<char*>(chars_.data()); }
  [[nodiscard]] std::uint8_t* null_mask() noexcept {
    return static_cast<std::uint8_t*>(mask_.data());
  }
  void set_null_count(size_type n) noexcept { null_count_ = n; }
  /// Host-accessible columns only: copies the data into a vector.
  template <class T>
  [[nodiscard]] std::vector<T> to_vector() const {
    auto v = view();
    auto const* p = v.data_as<T>();
    std::vector<T> out(static_cast<std::size_t>(size_));
    copy_bytes(out.data(), memory_space::host, p, v.space(), out.size() * sizeof(T),
               default_stream());
    return out;
  }

 private:
  type_id type_ = type_id::int32;
  size_type size_ = 0;
  buffer data_;
  buffer mask_;
  buffer chars_;
  size_type null_count_ = 0;
  decimal_format decimal_{};
};

}  // namespace joinery
