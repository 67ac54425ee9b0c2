#pragma once
// Tables: ordered sets of equally long columns.
#include <joinery/column.hpp>

#include <vector>

namespace joinery {

class table_view {
 public:
  table_view() = default;
  explicit table_view(std::vector<column_view> columns);
  [[nodiscard]] size_type num_columns() const noexcept {
    return static_cast<size_type>(columns_.size());
  }
  [[nodiscard]] size_type num_rows() const noexcept {
    return columns_.empty() ? 0 : columns_.front().size();
  }
  [[nodiscard]] column_view const& column(size_type i) const;
  [[nodiscard]] std::vector<column_view> const& columns() const noexcept { return columns_; }
  [[nodiscard]] auto begin() const noexcept { return columns_.begin(); }
  [[nodiscard]] auto end() const noexcept { return columns_.end(); }

 private:
  std::vector<column_view> columns_;
};

class table {
 public:
  table() = default;
  explicit table(std::vector<joinery::column> columns);
  [[nodiscard]] table_view view() const;
  operator table_view() const { return view(); }  // NOLINT: views are cheap
  [[nodiscard]] size_type num_columns() const noexcept {
    return static_cast<size_type>(columns_.size());
  }
  [[nodiscard]] size_type num_rows() const noexcept {
    return columns_.empty() ? 0 : columns_.front().size();
  }
  [[nodiscard]] joinery::column& column(size_type i);
  [[nodiscard]] joinery::column const& column(size_type i) const;
  [[nodiscard]] std::vector<joinery::column>& columns() noexcept { return columns_; }
  [[nodiscard]] std::vector<joinery::column> release() noexcept { return std::move(columns_); }

 private:
  std::vector<joinery::column> columns_;
};

}  // namespace joinery
