#pragma once
// Shared pieces of the joinery command-line tool.
#include <joinery/io.hpp>
#include <joinery/table.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace joinery::cli {

void add_gen(CLI::App& app);
void add_join(CLI::App& app);
void add_groupby(CLI::App& app);
void add_bench(CLI::App& app);

/// The result file options of a subcommand that writes one: --output PATH and --overwrite.
struct output_args {
  std::string path;
  bool overwrite = false;
  [[nodiscard]] bool given() const { return !path.empty(); }
  /// Refuses a path that cannot or must not be written, before any work is done.
  void check() const;
  void write(std::vector<std::string> const& names, table_view const& t) const;
};
/// Adds --output (required or not; `alone` says what happens without it) and --overwrite.
void add_output_options(CLI::App* c, output_args& out, bool required, std::string const& alone);

/// `s` without leading and trailing blanks (spaces, tabs).
std::string trim(std::string const& s);
/// Splits "a,b,c" (empty string: no items), trimming blanks around each item.
std::vector<std::string> split(std::string const& s, char sep = ',');
/// Parses a size that may be written as 2^k.
std::int64_t parse_size(std::string const& s, char const* what);
/// A byte count: digits with an optional unit KiB, MiB, GiB, TiB (powers of 2), KB, MB, GB, TB
/// (powers of 10) or B; input_error naming `what` for anything else, or zero.
std::size_t parse_bytes(std::string const& s, char const* what);
/// A list of GPU ids ("0,1,3"; a GPU may repeat), or "all": empty, which the library reads as
/// every GPU present; input_error for anything else.
std::vector<int> parse_devices(std::string const& s, char const* what);
/// Writes a host table as CSV (the header line when `header`, then rows) to a stream; nulls are
/// empty fields, strings are quoted where a reader needs it (an empty string is "").
void print_csv(std::ostream& os, std::vector<std::string> const& names, table_view const& t,
               bool header = true);
/// Wrapping uint64 sum of every integer value in the table and of every string's hash (as
/// joinery::checksum sums strings, and a join's aggregate form); floating columns are skipped.
std::uint64_t table_checksum(table_view const& t);

}  // namespace joinery::cli
