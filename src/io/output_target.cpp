// Where a result may be written: existing paths are kept unless the caller asks to replace them,
// and even then only what joinery itself writes (a file, or a directory of .npy columns) goes.
#include "io/io_detail.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <system_error>

namespace joinery::io {

namespace fs = std::filesystem;
using detail::quoted;

namespace {

// Extensions of formats users may expect but joinery does not write: refused rather than
// silently turned into a directory of that name.
constexpr std::array<std::string_view, 19> foreign_extensions{
  ".txt", ".tsv", ".psv", ".parquet", ".pq", ".json", ".jsonl", ".ndjson", ".npy", ".npz",
  ".arrow", ".feather", ".ipc", ".orc", ".avro", ".xlsx", ".gz", ".zst", ".xz"};

std::string lower_extension(fs::path const& p) {
  auto ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return ext;
}

/// True when `dir` is the working directory or holds it (replacing it would pull the ground
/// from under the caller).
bool holds_working_directory(fs::path const& dir) {
  std::error_code ec;
  auto const cwd = fs::current_path(ec);
  if (ec) { return false; }
  auto const a = fs::weakly_canonical(dir, ec);
  if (ec) { return false; }
  auto const b = fs::weakly_canonical(cwd, ec);
  if (ec) { return false; }
  auto [ai, bi] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return ai == a.end();
}

}  // namespace

std::string_view to_string(existing_output e) noexcept {
  switch (e) {
    case existing_output::refuse: return "refuse";
    case existing_output::replace: return "replace";
  }
  return "?";
}

output_format output_format_of(fs::path const& path) {
  auto const ext = lower_extension(path);
  if (ext == ".csv") { return output_format::csv; }
  if (std::find(foreign_extensions.begin(), foreign_extensions.end(), ext) !=
      foreign_extensions.end()) {
    throw input_error("cannot write " + quoted(path) + ": joinery writes CSV (a name ending in "
                      ".csv) or a directory of .npy column files (a name without an extension), "
                      "not '" + ext + "'");
  }
  return output_format::npy_directory;
}

void check_output_path(fs::path const& path, existing_output if_exists) {
  auto const format = output_format_of(path);
  detail::check_output_target(detail::normalized_target(path), quoted(path), if_exists, format);
}

namespace detail {

bool check_output_target(fs::path const& target, std::string_view what, existing_output mode,
                         output_format format) {
  std::error_code ec;
  auto const st = fs::symlink_status(target, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    throw input_error("cannot write " + std::string(what) + ": " + ec.message());
  }
  if (!fs::exists(st)) { return false; }
  auto const refuse = [&](std::string const& why) {
    throw input_error("cannot write " + std::string(what) + ": " + why + "; nothing was changed");
  };
  if (mode == existing_output::refuse) {
    refuse("it exists (ask to replace it: --overwrite, or existing_output::replace)");
  }
  if (format == output_format::csv) {
    if (!fs::is_regular_file(st)) { refuse("it exists and is not a regular file"); }
    return true;
  }
  if (!fs::is_directory(st)) { refuse("it exists and is not a directory"); }
  if (holds_working_directory(target)) { refuse("it is or holds the working directory"); }
  for (auto const& e : fs::directory_iterator(target, ec)) {
    auto const s = e.symlink_status(ec);
    if (ec || !fs::is_regular_file(s) || e.path().extension() != ".npy") {
      refuse("the directory holds " + quoted(e.path().filename()) +
             ", and only a directory of .npy files (one joinery wrote) is replaced");
    }
  }
  if (ec) { refuse("its entries cannot be listed: " + ec.message()); }
  return true;
}

}  // namespace detail
}  // namespace joinery::io
