#include <joinery/column.hpp>

#include "core/transfer.hpp"

#include <cstring>
#include <vector>

namespace joinery {

column::column(type_id type, size_type size, memory_resource* mr, stream_ref stream)
    : type_(type), size_(size) {
  JOINERY_EXPECTS(size >= 0, "column size must not be negative");
  if (mr == nullptr) { mr = host_resource(); }
  data_ = buffer(static_cast<std::size_t>(size) * size_of(type), mr, stream);
}

column column::copy_of(column_view const& v, memory_resource* mr, stream_ref stream) {
  if (mr == nullptr) { mr = host_resource(); }
  column out(v.type(), v.size(), mr, stream);
  copy_bytes(out.data_.data(), mr->space(), v.data(), v.space(),
             static_cast<std::size_t>(v.size()) * size_of(v.type()), stream);
  if (v.nullable()) {
    out.mask_ = buffer(null_mask_bytes(v.size()), mr, stream);
    copy_bytes(out.mask_.data(), mr->space(), v.null_mask(), v.space(),
               null_mask_bytes(v.size()), stream);
    out.null_count_ = v.null_count();
  }
  return out;
}

column_view column::view() const noexcept {
  return column_view(type_, data_.data(), size_, data_.space(),
                     static_cast<std::uint8_t const*>(mask_.data()), null_count_);
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
