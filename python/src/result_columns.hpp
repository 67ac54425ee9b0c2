#pragma once
// Results of the Python module: owned joinery columns handed to Arrow, NumPy or CuPy without a
// copy (each export shares ownership of the column it hands out).
#include <joinery/column.hpp>

#include <nanobind/nanobind.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace joinery::python {

/// What an operation reports about itself (join_stats / groupby_stats in Python's terms).
struct result_stats {
  std::string algorithm;
  std::string backend;
  std::string strategy;  ///< joins' table materialization; empty elsewhere
  double seconds = 0;
  double call_seconds = 0;  ///< wall time of the C++ call (join / groupby) as a caller sees it
  std::uint64_t bytes_moved = 0;
  std::vector<std::pair<std::string, double>> phases;
};

struct result_columns {
  std::vector<std::shared_ptr<column>> columns;
  /// The type each column is handed out as: its own, or float32 / float64 for a payload that
  /// crossed the join as the bits of a same-width unsigned integer.
  std::vector<type_id> types;
  result_stats stats;
  int device = 0;  ///< the CUDA device of device-resident columns

  [[nodiscard]] std::size_t size() const noexcept { return columns.size(); }
  [[nodiscard]] column const& at(std::size_t i) const;
  [[nodiscard]] type_id type(std::size_t i) const { return i < types.size() ? types[i] : at(i).type(); }
  [[nodiscard]] bool on_device(std::size_t i) const { return at(i).space() == memory_space::device; }
  [[nodiscard]] size_type null_count(std::size_t i) const { return at(i).view().null_count(); }
  /// (schema, array) PyCapsules of the Arrow C data interface; host-resident columns only.
  [[nodiscard]] nanobind::tuple arrow_capsules(std::size_t i) const;
  /// A NumPy array (host data) or a CuPy array (device data) over the column.
  [[nodiscard]] nanobind::object array(std::size_t i) const;
  /// The validity bitmap (Arrow's layout) as a uint8 array in the column's memory, or None.
  [[nodiscard]] nanobind::object validity(std::size_t i) const;
  [[nodiscard]] nanobind::dict stats_dict() const;
};

}  // namespace joinery::python
