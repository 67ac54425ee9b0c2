// Text of bool, dates, timestamps and decimals, and of the CSV header's type annotations.
// Dates use the proleptic Gregorian calendar through Howard Hinnant's days_from_civil and
// civil_from_days (http://howardhinnant.github.io/date_algorithms.html), restated below.
#include "io/typed_text.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>

namespace joinery::io::detail {

namespace {

constexpr std::int64_t seconds_per_day = 86400;
// Longer years are not dates anyone writes, and keep the day arithmetic far from overflow.
constexpr std::size_t max_year_digits = 15;
constexpr std::size_t max_shown_chars = 40;
constexpr int max_decimal_digits = 38;

/// A timestamp unit: its ticks per second and digits of fraction.
struct unit_info {
  std::int64_t per_second;
  int digits;
};

unit_info unit_of(type_id unit) {
  switch (unit) {
    case type_id::timestamp_s: return {1, 0};
    case type_id::timestamp_ms: return {1000, 3};
    case type_id::timestamp_us: return {1000000, 6};
    case type_id::timestamp_ns: return {1000000000, 9};
    default: break;
  }
  JOINERY_FAIL(std::string(to_string(unit)) + " is not a timestamp type");
}

std::string quote(std::string_view text) {
  std::string out(1, '\'');  // appended, not `"'" + ...`, which GCC 12 warns about falsely
  out += shown_text(text);
  out += '\'';
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// Reads exactly `n` digits at s[at..] into v and steps past them; false when they are not there.
bool fixed_digits(std::string_view s, std::size_t& at, std::size_t n, unsigned& v) {
  if (at > s.size() || s.size() - at < n) { return false; }
  v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    auto const c = s[at + i];
    if (!is_digit(c)) { return false; }
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  at += n;
  return true;
}

bool skip(std::string_view s, std::size_t& at, char c) {
  if (at >= s.size() || s[at] != c) { return false; }
  ++at;
  return true;
}

bool is_leap(std::int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }

unsigned days_in_month(std::int64_t y, unsigned m) {
  static constexpr unsigned days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/// Reads YYYY-MM-DD at s[at..]; false when it is not there, with `why` set (": ...") when the
/// digits are there but name no day.
bool read_date(std::string_view s, std::size_t& at, civil_date& d, std::string& why) {
  auto const start = at;
  bool const negative = skip(s, at, '-');
  auto const year_start = at;
  while (at < s.size() && is_digit(s[at])) { ++at; }
  auto const year_digits = at - year_start;
  if (year_digits < 4 || year_digits > max_year_digits) { return false; }
  std::int64_t year = 0;
  std::from_chars(s.data() + year_start, s.data() + at, year);
  d.year = negative ? -year : year;
  if (!skip(s, at, '-') || !fixed_digits(s, at, 2, d.month)) { return false; }
  auto const month_end = at;
  if (!skip(s, at, '-') || !fixed_digits(s, at, 2, d.day)) { return false; }
  if (d.month < 1 || d.month > 12) {
    why = ": there is no month " + std::to_string(d.month);
    return false;
  }
  auto const last = days_in_month(d.year, d.month);
  if (d.day < 1 || d.day > last) {
    why = ": " + std::string(s.substr(start, month_end - start)) + " has " +
          std::to_string(last) + " days";
    return false;
  }
  return true;
}

/// Writes `v` with at least `width` digits (zeros in front).
char* write_padded(char* out, std::uint64_t v, int width) {
  char digits[24];
  auto const* end = std::to_chars(digits, digits + sizeof digits, v).ptr;
  auto const n = static_cast<int>(end - digits);
  for (int i = n; i < width; ++i) { *out++ = '0'; }
  return std::copy(static_cast<char const*>(digits), end, out);
}

char* format_civil(char* out, civil_date d) {
  if (d.year < 0) { *out++ = '-'; }
  out = write_padded(out, static_cast<std::uint64_t>(d.year < 0 ? -d.year : d.year), 4);
  *out++ = '-';
  out = write_padded(out, d.month, 2);
  *out++ = '-';
  return write_padded(out, d.day, 2);
}

template <class T>
T load(column_view const& c, size_type row) {
  T v;
  std::memcpy(&v, static_cast<char const*>(c.data()) + row * static_cast<size_type>(sizeof(T)),
              sizeof(T));
  return v;
}

std::string range_of(type_id t) {
  char lo[max_value_chars];
  char hi[max_value_chars];
  char* lo_end = nullptr;
  char* hi_end = nullptr;
  if (t == type_id::date32) {
    lo_end = format_date32(lo, std::numeric_limits<std::int32_t>::min());
    hi_end = format_date32(hi, std::numeric_limits<std::int32_t>::max());
  } else {
    lo_end = format_timestamp(lo, t, std::numeric_limits<std::int64_t>::min());
    hi_end = format_timestamp(hi, t, std::numeric_limits<std::int64_t>::max());
  }
  return " (" + std::string(lo, lo_end) + " to " + std::string(hi, hi_end) + ")";
}

}  // namespace

std::string shown_text(std::string_view text) {
  return text.size() <= max_shown_chars ? std::string(text)
                                        : std::string(text.substr(0, max_shown_chars)) + "...";
}

// Both directions count years from March, so that the leap day ends a year, in eras of 400
// years (146097 days, a whole number of weeks and leap cycles); 719468 is the number of days
// from 0000-03-01 to 1970-01-01.
std::int64_t days_from_civil(civil_date d) noexcept {
  auto const y = d.year - (d.month <= 2 ? 1 : 0);
  auto const era = (y >= 0 ? y : y - 399) / 400;
  auto const year_of_era = y - era * 400;                                       // [0, 399]
  auto const month_from_march = d.month > 2 ? d.month - 3 : d.month + 9;        // [0, 11]
  auto const day_of_year = (153 * month_from_march + 2) / 5 + d.day - 1;       // [0, 365]
  auto const day_of_era =
    year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;      // [0, 146096]
  return era * 146097 + day_of_era - 719468;
}

civil_date civil_from_days(std::int64_t days) noexcept {
  auto const z = days + 719468;
  auto const era = (z >= 0 ? z : z - 146096) / 146097;
  auto const day_of_era = z - era * 146097;                                     // [0, 146096]
  // Less the leap days so far, a 365-day year divides it.
  auto const year_of_era =
    (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  auto const day_of_year =
    day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);     // [0, 365]
  auto const month_from_march = (5 * day_of_year + 2) / 153;                    // [0, 11]
  civil_date d;
  d.day = static_cast<unsigned>(day_of_year - (153 * month_from_march + 2) / 5 + 1);
  d.month = static_cast<unsigned>(month_from_march < 10 ? month_from_march + 3
                                                        : month_from_march - 9);
  d.year = year_of_era + era * 400 + (d.month <= 2 ? 1 : 0);
  return d;
}

std::string parse_bool(std::string_view text, std::uint8_t& out) {
  for (std::string_view t : {"true", "True", "TRUE", "t", "1"}) {
    if (text == t) {
      out = 1;
      return {};
    }
  }
  for (std::string_view f : {"false", "False", "FALSE", "f", "0"}) {
    if (text == f) {
      out = 0;
      return {};
    }
  }
  return quote(text) + " is not a bool (true/false, True/False, TRUE/FALSE, t/f or 1/0)";
}

std::string parse_date32(std::string_view text, std::int32_t& out) {
  std::size_t at = 0;
  civil_date d;
  std::string why;
  if (!read_date(text, at, d, why) || at != text.size()) {
    return quote(text) + " is not a date" + (why.empty() ? " (expected YYYY-MM-DD)" : why);
  }
  auto const days = days_from_civil(d);
  if (days < std::numeric_limits<std::int32_t>::min() ||
      days > std::numeric_limits<std::int32_t>::max()) {
    return quote(text) + " is out of range for date32" + range_of(type_id::date32);
  }
  out = static_cast<std::int32_t>(days);
  return {};
}

std::string parse_timestamp(std::string_view text, type_id unit, std::int64_t& out) {
  auto const u = unit_of(unit);
  auto const not_one = [&](std::string const& why) {
    return quote(text) + " is not a timestamp" +
           (why.empty() ? " (expected YYYY-MM-DD HH:MM:SS[.fraction])" : why);
  };
  std::size_t at = 0;
  civil_date d;
  std::string why;
  if (!read_date(text, at, d, why)) { return not_one(why); }
  unsigned hour = 0, minute = 0, second = 0;
  std::int64_t fraction = 0;  // in ticks of the unit
  if (at != text.size()) {
    if (text[at] != ' ' && text[at] != 'T') { return not_one({}); }
    ++at;
    if (!fixed_digits(text, at, 2, hour) || !skip(text, at, ':') ||
        !fixed_digits(text, at, 2, minute) || !skip(text, at, ':') ||
        !fixed_digits(text, at, 2, second)) {
      return not_one({});
    }
    if (hour > 23) { return not_one(": hour " + std::to_string(hour) + " is not 0 to 23"); }
    if (minute > 59) { return not_one(": minute " + std::to_string(minute) + " is not 0 to 59"); }
    if (second > 59) { return not_one(": second " + std::to_string(second) + " is not 0 to 59"); }
    if (skip(text, at, '.')) {
      auto const start = at;
      while (at < text.size() && is_digit(text[at])) { ++at; }
      auto const digits = static_cast<int>(at - start);
      if (digits == 0) { return not_one({}); }
      if (digits > u.digits) {
        return quote(text) + " has " + std::to_string(digits) + " digits of fraction but " +
               std::string(to_string(unit)) + " holds " +
               (u.digits == 0 ? std::string("whole seconds") : std::to_string(u.digits));
      }
      for (auto i = start; i < at; ++i) { fraction = fraction * 10 + (text[i] - '0'); }
      for (int i = digits; i < u.digits; ++i) { fraction *= 10; }
    }
    if (at != text.size()) { return not_one({}); }
  }
  // 128 bits hold every 15-digit year in nanoseconds; the range check comes after.
  __int128 const seconds = static_cast<__int128>(days_from_civil(d)) * seconds_per_day +
                           hour * 3600 + minute * 60 + second;
  __int128 const ticks = seconds * u.per_second + fraction;
  if (ticks < std::numeric_limits<std::int64_t>::min() ||
      ticks > std::numeric_limits<std::int64_t>::max()) {
    return quote(text) + " is out of range for " + std::string(to_string(unit)) + range_of(unit);
  }
  out = static_cast<std::int64_t>(ticks);
  return {};
}

std::string parse_decimal(std::string_view text, decimal_format f, __int128& out) {
  int const scale = f.scale;
  int const precision = std::min<int>(f.precision, max_decimal_digits);
  JOINERY_EXPECTS(scale >= 0 && scale <= precision,
                  "decimal scale " + std::to_string(scale) + " is not 0 to the precision " +
                    std::to_string(precision));
  std::size_t at = 0;
  bool const negative = at < text.size() && text[at] == '-';
  if (at < text.size() && (text[at] == '-' || text[at] == '+')) { ++at; }
  auto const int_start = at;
  while (at < text.size() && is_digit(text[at])) { ++at; }
  auto const int_end = at;
  auto frac_start = at;
  if (skip(text, at, '.')) {
    frac_start = at;
    while (at < text.size() && is_digit(text[at])) { ++at; }
  }
  auto const frac_digits = static_cast<int>(at - frac_start);
  if (at != text.size() || (int_end == int_start && frac_digits == 0)) {
    return quote(text) + " is not a decimal number";
  }
  if (frac_digits > scale) {
    return quote(text) + " has " + std::to_string(frac_digits) +
           " digits after the point but the scale is " + std::to_string(scale) +
           " (values are not rounded)";
  }
  unsigned __int128 limit = 1;  // 10^precision, which no value reaches
  for (int i = 0; i < precision; ++i) { limit *= 10; }
  unsigned __int128 v = 0;
  auto const too_long = [&] {
    return quote(text) + " has more digits than precision " + std::to_string(precision) +
           " holds (at most " + std::to_string(precision - scale) + " before the point)";
  };
  // v * 10 + digit < limit, checked without overflowing 128 bits.
  auto const push = [&](unsigned digit) {
    if (v > (limit - 1 - digit) / 10) { return false; }
    v = v * 10 + digit;
    return true;
  };
  for (auto i = int_start; i < int_end; ++i) {
    if (!push(static_cast<unsigned>(text[i] - '0'))) { return too_long(); }
  }
  for (auto i = frac_start; i < at; ++i) {
    if (!push(static_cast<unsigned>(text[i] - '0'))) { return too_long(); }
  }
  for (int i = frac_digits; i < scale; ++i) {
    if (!push(0)) { return too_long(); }
  }
  out = negative ? -static_cast<__int128>(v) : static_cast<__int128>(v);
  return {};
}

std::string parse_logical(std::string_view text, type_id type, decimal_format f, void* out) {
  std::string why;
  switch (type) {
    case type_id::bool8: {
      std::uint8_t v = 0;
      why = parse_bool(text, v);
      std::memcpy(out, &v, sizeof v);
      return why;
    }
    case type_id::date32: {
      std::int32_t v = 0;
      why = parse_date32(text, v);
      std::memcpy(out, &v, sizeof v);
      return why;
    }
    case type_id::timestamp_s: case type_id::timestamp_ms: case type_id::timestamp_us:
    case type_id::timestamp_ns: {
      std::int64_t v = 0;
      why = parse_timestamp(text, type, v);
      std::memcpy(out, &v, sizeof v);
      return why;
    }
    case type_id::decimal64: {
      // Whatever the format says, a decimal64 holds 18 digits.
      f.precision = std::min<std::uint8_t>(f.precision, 18);
      __int128 v = 0;
      why = parse_decimal(text, f, v);
      auto const narrow = static_cast<std::int64_t>(v);
      std::memcpy(out, &narrow, sizeof narrow);
      return why;
    }
    case type_id::decimal128: {
      __int128 v = 0;
      why = parse_decimal(text, f, v);
      std::memcpy(out, &v, sizeof v);
      return why;
    }
    default: break;
  }
  JOINERY_FAIL(std::string(to_string(type)) + " is not a type stored as an integer");
}

char* format_bool(char* out, std::uint8_t v) {
  std::string_view const t = v != 0 ? "true" : "false";
  return std::copy(t.begin(), t.end(), out);
}

char* format_date32(char* out, std::int32_t days) {
  return format_civil(out, civil_from_days(days));
}

char* format_timestamp(char* out, type_id unit, std::int64_t v) {
  auto const u = unit_of(unit);
  // Floor divisions: the time of day and the fraction are never negative.
  auto seconds = v / u.per_second;
  auto fraction = v % u.per_second;
  if (fraction < 0) {
    fraction += u.per_second;
    --seconds;
  }
  auto days = seconds / seconds_per_day;
  auto of_day = seconds % seconds_per_day;
  if (of_day < 0) {
    of_day += seconds_per_day;
    --days;
  }
  out = format_civil(out, civil_from_days(days));
  *out++ = ' ';
  out = write_padded(out, static_cast<std::uint64_t>(of_day / 3600), 2);
  *out++ = ':';
  out = write_padded(out, static_cast<std::uint64_t>(of_day / 60 % 60), 2);
  *out++ = ':';
  out = write_padded(out, static_cast<std::uint64_t>(of_day % 60), 2);
  if (fraction != 0) {
    *out++ = '.';
    out = write_padded(out, static_cast<std::uint64_t>(fraction), u.digits);
  }
  return out;
}

char* format_decimal(char* out, __int128 v, int scale) {
  JOINERY_EXPECTS(scale >= 0 && scale <= max_decimal_digits,
                  "decimal scale " + std::to_string(scale) + " is not 0 to 38");
  auto magnitude = v < 0 ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  char digits[40];  // least significant first
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  if (v < 0) { *out++ = '-'; }
  int const whole = n - scale;  // digits before the point
  if (whole <= 0) {
    *out++ = '0';
  } else {
    for (int i = n - 1; i >= scale; --i) { *out++ = digits[i]; }
  }
  if (scale == 0) { return out; }
  *out++ = '.';
  for (int i = whole; i < 0; ++i) { *out++ = '0'; }
  for (int i = std::min(n, scale) - 1; i >= 0; --i) { *out++ = digits[i]; }
  return out;
}

char* format_fixed(char* out, column_view const& c, size_type row) {
  switch (c.type()) {
    case type_id::bool8: return format_bool(out, load<std::uint8_t>(c, row));
    case type_id::date32: return format_date32(out, load<std::int32_t>(c, row));
    case type_id::timestamp_s: case type_id::timestamp_ms: case type_id::timestamp_us:
    case type_id::timestamp_ns:
      return format_timestamp(out, c.type(), load<std::int64_t>(c, row));
    case type_id::decimal64:
      return format_decimal(out, load<std::int64_t>(c, row), c.decimal().scale);
    case type_id::decimal128:
      return format_decimal(out, load<__int128>(c, row), c.decimal().scale);
    default: break;
  }
  return dispatch_type(c.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    return std::to_chars(out, out + max_value_chars, load<T>(c, row)).ptr;
  });
}

std::string type_annotation(type_id type, decimal_format f) {
  std::string out(to_string(type));
  if (is_decimal(type)) {
    out += '(';
    out += std::to_string(f.precision);
    out += ',';
    out += std::to_string(f.scale);
    out += ')';
  }
  return out;
}

std::string parse_type_annotation(std::string_view text, type_id& type, decimal_format& f) {
  auto const unknown = [&] {
    return "has unknown type '" + shown_text(text) +
           "'; known: int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 string "
           "large_string bool date32 (or date) timestamp_s timestamp_ms timestamp_us (or "
           "timestamp) timestamp_ns decimal64(precision,scale) decimal128(precision,scale)";
  };
  auto const open = text.find('(');
  auto name = text.substr(0, open);
  while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) { name.remove_suffix(1); }
  try {
    type = type_from_string(name);
  } catch (std::exception const&) {
    return unknown();
  }
  if (!is_decimal(type)) {
    if (open != std::string_view::npos) { return unknown(); }
    return {};
  }
  auto const form = std::string(name) + "(precision,scale), as " + std::string(name) +
                    (type == type_id::decimal64 ? "(12,2)" : "(38,4)");
  if (open == std::string_view::npos) {
    return "has type '" + std::string(text) + "', which needs its precision and scale: " + form;
  }
  auto const malformed = [&] { return "has type '" + shown_text(text) + "'; expected " + form; };
  // "(p)" or "(p,s)", blanks allowed around the numbers.
  int numbers[2] = {0, 0};
  int count = 0;
  std::size_t at = open + 1;
  for (;;) {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) { ++at; }
    auto const* b = text.data() + at;
    auto const r = std::from_chars(b, text.data() + text.size(), numbers[count]);
    if (r.ec != std::errc{} || r.ptr == b) { return malformed(); }
    at = static_cast<std::size_t>(r.ptr - text.data());
    ++count;
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) { ++at; }
    if (count < 2 && skip(text, at, ',')) { continue; }
    if (!skip(text, at, ')') || at != text.size()) { return malformed(); }
    break;
  }
  int const most = type == type_id::decimal64 ? 18 : max_decimal_digits;
  int const precision = numbers[0];
  int const scale = count == 2 ? numbers[1] : 0;
  if (precision < 1 || precision > most) {
    return "has type '" + std::string(text) + "': a " + std::string(name) +
           "'s precision is 1 to " + std::to_string(most);
  }
  if (scale < 0 || scale > precision) {
    return "has type '" + std::string(text) + "': the scale must be 0 to the precision (" +
           std::to_string(precision) + ")";
  }
  f.precision = static_cast<std::uint8_t>(precision);
  f.scale = static_cast<std::int8_t>(scale);
  return {};
}

}  // namespace joinery::io::detail
