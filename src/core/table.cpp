#include <joinery/table.hpp>

#include <string>

namespace joinery {

namespace {
template <class Columns>
void check_lengths(Columns const& cols) {
  for (auto const& c : cols) {
    JOINERY_EXPECTS(c.size() == cols.front().size(),
                    "all columns of a table must have the same number of rows (" +
                      std::to_string(cols.front().size()) + " vs " + std::to_string(c.size()) +
                      ")");
  }
}
}  // namespace

table_view::table_view(std::vector<column_view> columns) : columns_(std::move(columns)) {
  check_lengths(columns_);
}

column_view const& table_view::column(size_type i) const {
  JOINERY_EXPECTS(i >= 0 && i < num_columns(),
                  "column index " + std::to_string(i) + " out of range: the table has " +
                    std::to_string(num_columns()) + " columns");
  return columns_[static_cast<std::size_t>(i)];
}

table::table(std::vector<joinery::column> columns) : columns_(std::move(columns)) {
  check_lengths(columns_);
}

table_view table::view() const {
  std::vector<column_view> v;
  v.reserve(columns_.size());
  for (auto const& c : columns_) { v.push_back(c.view()); }
  return table_view(std::move(v));
}

joinery::column& table::column(size_type i) {
  JOINERY_EXPECTS(i >= 0 && i < num_columns(), "column index " + std::to_string(i) +
                                                 " out of range");
  return columns_[static_cast<std::size_t>(i)];
}
joinery::column const& table::column(size_type i) const {
  JOINERY_EXPECTS(i >= 0 && i < num_columns(), "column index " + std::to_string(i) +
                                                 " out of range");
  return columns_[static_cast<std::size_t>(i)];
}

}  // namespace joinery
