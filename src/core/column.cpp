#include <joinery/column.hpp>

#include "core/transfer.hpp"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace joinery {

column::column(type_id type, size_type size, memory_resource* mr, stream_ref stream)
    : type_(type), size_(size) {
  JOINERY_EXPECTS(size >= 0, "column size must not be negative");
  JOINERY_EXPECTS(!is_string(type), "string columns are made with column::strings");
  if (mr == nullptr) { mr = host_resource(); }
  data_ = buffer(static_cast<std::size_t>(size) * size_of(type), mr, stream);
  if (type == type_id::decimal128) { decimal_ = decimal_format{38, 0}; }
}

column column::strings(type_id type, size_type size, std::size_t chars, memory_resource* mr,
                       stream_ref stream) {
  JOINERY_EXPECTS(is_string(type), "column::strings takes string or large_string, not " +
                                     std::string(to_string(type)));
  JOINERY_EXPECTS(size >= 0, "column size must not be negative");
  JOINERY_EXPECTS(type == type_id::large_string ||
                    chars <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()),
                  "a string column of " + std::to_string(chars) +
                    " characters needs 64-bit offsets (large_string)");
  if (mr == nullptr) { mr = host_resource(); }
  column out;
  out.type_ = type;
  out.size_ = size;
  out.data_ = buffer(static_cast<std::size_t>(size + 1) * size_of(type), mr, stream);
  out.chars_ = buffer(chars, mr, stream);
  return out;
}

namespace {

/// Offset i of a string column in any memory space.
std::int64_t offset_in(column_view const& v, size_type i, stream_ref stream) {
  std::int64_t o = 0;
  auto const w = size_of(v.type());
  copy_bytes(&o, memory_space::host, static_cast<char const*>(v.data()) + i * w, v.space(), w,
             stream);
  stream.synchronize();
  return v.type() == type_id::string ? static_cast<std::int32_t>(o) : o;
}

}  // namespace

column column::copy_of(column_view const& v, memory_resource* mr, stream_ref stream) {
  if (mr == nullptr) { mr = host_resource(); }
  column out;
  if (is_string(v.type())) {
    auto const first = offset_in(v, 0, stream);
    auto const last = offset_in(v, v.size(), stream);
    auto const w = size_of(v.type());
    out = strings(v.type(), v.size(), static_cast<std::size_t>(last - first), mr, stream);
    copy_bytes(out.chars_.data(), mr->space(), v.chars() + first, v.space(),
               static_cast<std::size_t>(last - first), stream);
    auto const offset_bytes = static_cast<std::size_t>(v.size() + 1) * w;
    if (first == 0) {
      copy_bytes(out.data_.data(), mr->space(), v.data(), v.space(), offset_bytes, stream);
    } else {  // rebased on the host
      auto rebase = [&](auto tag) {
        using T = typename decltype(tag)::type;
        std::vector<T> offs(static_cast<std::size_t>(v.size() + 1));
        copy_bytes(offs.data(), memory_space::host, v.data(), v.space(), offset_bytes, stream);
        stream.synchronize();
        for (auto& o : offs) { o = static_cast<T>(o - first); }
        copy_bytes(out.data_.data(), mr->space(), offs.data(), memory_space::host, offset_bytes,
                   stream);
        stream.synchronize();  // offs is a local
      };
      if (w == 4) {
        rebase(type_tag<std::int32_t>{});
      } else {
        rebase(type_tag<std::int64_t>{});
      }
    }
  } else {
    out = column(v.type(), v.size(), mr, stream);
    copy_bytes(out.data_.data(), mr->space(), v.data(), v.space(),
               static_cast<std::size_t>(v.size()) * size_of(v.type()), stream);
  }
  out.decimal_ = v.decimal();
  if (v.nullable()) {
    out.mask_ = buffer(null_mask_bytes(v.size()), mr, stream);
    copy_bytes(out.mask_.data(), mr->space(), v.null_mask(), v.space(),
               null_mask_bytes(v.size()), stream);
    out.null_count_ = v.null_count();
  }
  return out;
}

column_view column::view() const noexcept {
  auto const* mask = static_cast<std::uint8_t const*>(mask_.data());
  column_view v;
  v.type_ = type_;
  v.data_ = data_.data();
  v.size_ = size_;
  v.space_ = data_.space();
  v.null_mask_ = mask;
  v.null_count_ = null_count_;
  v.chars_ = static_cast<char const*>(chars_.data());
  v.decimal_ = decimal_;
  return v;
}

void column::set_type(type_id type, decimal_format decimal) {
  JOINERY_EXPECTS(!is_string(type) && !is_string(type_) && size_of(type) == size_of(type_),
                  "a " + std::string(to_string(type_)) + " column cannot become " +
                    std::string(to_string(type)));
  type_ = type;
  decimal_ = is_decimal(type) ? decimal : decimal_format{};
}

std::uint8_t* column::make_nullable() {
  if (mask_.data() == nullptr && size_ > 0) {
    mask_ = buffer(null_mask_bytes(size_), data_.resource(), data_.stream());
    if (host_accessible(space())) {
      std::memset(mask_.data(), 0xff, mask_.size());
    } else {
      detail::fill_device_bytes(mask_.data(), 0xff, mask_.size(), data_.stream());
    }
    null_count_ = 0;
  }
  return static_cast<std::uint8_t*>(mask_.data());
}

}  // namespace joinery
