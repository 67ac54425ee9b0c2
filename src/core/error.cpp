#include <joinery/error.hpp>

#include <string>

namespace joinery::detail {
void throw_logic_error(char const* file, int line, std::string const& msg) {
  // The message comes first: it is what users read; the location helps us.
  std::string const f(file);
  auto const slash = f.find_last_of('/');
  throw logic_error(msg + " [" + (slash == std::string::npos ? f : f.substr(slash + 1)) + ":" +
                    std::to_string(line) + "]");
}
}  // namespace joinery::detail
