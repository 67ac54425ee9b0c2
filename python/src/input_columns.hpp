#pragma once
// Input columns of the Python module: the view joinery reads in place and the owner that keeps
// that memory alive (an imported Arrow array, a Python array object, or a gathered buffer).
#include <joinery/column.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <memory>
#include <string>
#include <vector>

namespace joinery::python {

struct input_column {
  column_view view;
  int device = -1;  ///< CUDA device of device-resident data; -1 for host data
  std::shared_ptr<void> owner;
  /// Chunks gathered into one buffer (0: read in place, no copy).
  std::int64_t chunks_gathered = 0;
};

/// The columns of a table-like input, or one column (names has one entry, is_table false).
struct named_columns {
  std::vector<std::string> names;
  std::vector<input_column> columns;
  bool is_table = false;
};

/// A 1-D array (the buffer protocol or DLPack, through nanobind) read in place. Refuses strided views, more than one dimension and types joinery has no column for.
input_column column_from_array(nanobind::ndarray<nanobind::ro> const& array,
                               std::string const& name);

/// What __arrow_c_array__ hands out: one array, or a record batch (a struct array) of columns.
named_columns columns_from_arrow_array(nanobind::capsule schema, nanobind::capsule array);

/// What __arrow_c_stream__ hands out: batches of one column or of a table's columns. A column
/// that arrives in one chunk is read in place; several chunks are gathered once into one buffer.
named_columns columns_from_arrow_stream(nanobind::capsule stream);

}  // namespace joinery::python
