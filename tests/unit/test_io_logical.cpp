// Files of the types stored as integers (bool8, date32, the timestamps, the decimals): their text
// (parse and format, edge dates, fractions, errors), CSV read -> write -> read with nulls, .npy
// as NumPy's bool and datetime64 (decimals refused), and format_value.
#include "io_test_util.hpp"

#include "io/io_detail.hpp"
#include "io/typed_text.hpp"

#include <joinery/io.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace {

using joinery::column;
using joinery::column_view;
using joinery::decimal_format;
using joinery::size_type;
using joinery::type_id;
namespace io = joinery::io;
namespace text = joinery::io::detail;
using namespace joinery::test::io_util;

using i128 = __int128;

/// 10^n as a 128-bit integer.
i128 pow10(int n) {
  i128 v = 1;
  for (int i = 0; i < n; ++i) { v *= 10; }
  return v;
}

template <class T>
std::string formatted(char* (*f)(char*, T), T v) {
  char buf[text::max_value_chars];
  return {buf, f(buf, v)};
}

std::string date_text(std::int32_t days) { return formatted(&text::format_date32, days); }
std::string bool_text(std::uint8_t v) { return formatted(&text::format_bool, v); }
std::string timestamp_text(type_id unit, std::int64_t v) {
  char buf[text::max_value_chars];
  return {buf, text::format_timestamp(buf, unit, v)};
}
std::string decimal_text(i128 v, int scale) {
  char buf[text::max_value_chars];
  return {buf, text::format_decimal(buf, v, scale)};
}

/// Expects `why` (a parse's answer) to be an error holding every one of `parts`.
void expect_why(std::string const& why, std::initializer_list<std::string> parts) {
  ASSERT_FALSE(why.empty()) << "no error; expected one mentioning '" << *parts.begin() << "'";
  for (auto const& part : parts) {
    EXPECT_NE(why.find(part), std::string::npos) << "'" << part << "' missing from: " << why;
  }
}

std::int32_t date_of(std::string_view s) {
  std::int32_t v = 0;
  auto const why = text::parse_date32(s, v);
  EXPECT_EQ(why, "") << s;
  return v;
}

std::int64_t timestamp_of(std::string_view s, type_id unit) {
  std::int64_t v = 0;
  auto const why = text::parse_timestamp(s, unit, v);
  EXPECT_EQ(why, "") << s;
  return v;
}

i128 decimal_of(std::string_view s, decimal_format f) {
  i128 v = 0;
  auto const why = text::parse_decimal(s, f, v);
  EXPECT_EQ(why, "") << s;
  return v;
}

TEST(TypedText, DatesAtTheirEdges) {
  struct known {
    char const* text;
    std::int32_t days;
  };
  for (auto const& k : {known{"1970-01-01", 0}, known{"1969-12-31", -1}, known{"2000-02-29", 11016},
                        known{"1900-03-01", -25508}, known{"9999-12-31", 2932896},
                        known{"0001-01-01", -719162}, known{"2021-03-04", 18690}}) {
    EXPECT_EQ(date_of(k.text), k.days) << k.text;
    EXPECT_EQ(date_text(k.days), k.text);
  }
  // Every day from 0001 to past 9999 formats to the next calendar day and reads back.
  auto prev = text::civil_from_days(-719163);
  for (std::int32_t d = -719162; d <= 2932897; ++d) {
    auto const c = text::civil_from_days(d);
    bool const next_day = c.year == prev.year && c.month == prev.month && c.day == prev.day + 1;
    bool const next_month = c.year == prev.year && c.month == prev.month + 1 && c.day == 1;
    bool const next_year =
      c.year == prev.year + 1 && c.month == 1 && c.day == 1 && prev.month == 12;
    ASSERT_TRUE(next_day || next_month || next_year) << d;
    ASSERT_EQ(text::days_from_civil(c), d);
    if (d % 97 == 0) { ASSERT_EQ(date_of(date_text(d)), d); }
    prev = c;
  }
  for (std::int32_t d : {-1000000, -719163, 3000000}) { EXPECT_EQ(date_of(date_text(d)), d); }
  // date32's whole range, years before 0 written with a '-'.
  for (auto d :
       {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()}) {
    EXPECT_EQ(date_of(date_text(d)), d) << date_text(d);
  }
  EXPECT_EQ(date_text(std::numeric_limits<std::int32_t>::min()), "-5877641-06-23");
  EXPECT_EQ(date_text(date_of("-0001-12-31")), "-0001-12-31");
}

TEST(TypedText, BadDatesAreErrors) {
  std::int32_t v = 0;
  expect_why(text::parse_date32("2021-02-30", v),
             {"'2021-02-30' is not a date", "2021-02 has 28 days"});
  expect_why(text::parse_date32("1900-02-29", v), {"1900-02 has 28 days"});
  EXPECT_EQ(text::parse_date32("2000-02-29", v), "");
  expect_why(text::parse_date32("2021-13-01", v), {"'2021-13-01' is not a date", "no month 13"});
  expect_why(text::parse_date32("2021-00-10", v), {"no month 0"});
  expect_why(text::parse_date32("2021-04-31", v), {"2021-04 has 30 days"});
  for (auto const* bad : {"", "2021-1-01", "21-01-01", "2021/01/01", "2021-01-01x", "2021-01-01 ",
                          "2021-01-1", "x", "2021-01-01 00:00:00"}) {
    expect_why(text::parse_date32(bad, v), {"is not a date (expected YYYY-MM-DD)"});
  }
  expect_why(text::parse_date32("5881581-01-01", v),
             {"out of range for date32", "(-5877641-06-23 to 5881580-07-11)"});
  expect_why(text::parse_date32(std::string(60, '1'), v), {"'1111111111", "...'"});
}

TEST(TypedText, TimestampsInEveryUnit) {
  struct unit {
    type_id type;
    std::int64_t per_second;
    char const* half;  // the fraction .5 as the unit writes it
  };
  std::int64_t const seconds = 1614834367;  // 2021-03-04 05:06:07
  for (auto const& u :
       {unit{type_id::timestamp_s, 1, ""}, unit{type_id::timestamp_ms, 1000, ".500"},
        unit{type_id::timestamp_us, 1000000, ".500000"},
        unit{type_id::timestamp_ns, 1000000000, ".500000000"}}) {
    SCOPED_TRACE(std::string(joinery::to_string(u.type)));
    EXPECT_EQ(timestamp_of("1970-01-01 00:00:00", u.type), 0);
    EXPECT_EQ(timestamp_text(u.type, 0), "1970-01-01 00:00:00");
    EXPECT_EQ(timestamp_of("1969-12-31 23:59:59", u.type), -u.per_second);
    EXPECT_EQ(timestamp_text(u.type, -u.per_second), "1969-12-31 23:59:59");
    EXPECT_EQ(timestamp_of("2021-03-04 05:06:07", u.type), seconds * u.per_second);
    EXPECT_EQ(timestamp_of("2021-03-04T05:06:07", u.type), seconds * u.per_second);
    EXPECT_EQ(timestamp_of("2021-03-04", u.type), 18690 * 86400 * u.per_second);
    EXPECT_EQ(timestamp_text(u.type, 18690 * 86400 * u.per_second), "2021-03-04 00:00:00");
    EXPECT_EQ(timestamp_of("1950-06-15 12:30:00", u.type), -616851000 * u.per_second);
    if (u.per_second > 1) {
      auto const half = seconds * u.per_second + u.per_second / 2;
      EXPECT_EQ(timestamp_of("2021-03-04 05:06:07.5", u.type), half);
      EXPECT_EQ(timestamp_text(u.type, half), std::string("2021-03-04 05:06:07") + u.half);
      // Before 1970 the fraction still counts forward from the second.
      EXPECT_EQ(timestamp_of("1969-12-31 23:59:59.5", u.type), -u.per_second / 2);
      EXPECT_EQ(timestamp_text(u.type, -1),
                "1969-12-31 23:59:59." + std::string(std::strlen(u.half) - 1, '9'));
    }
    // The whole int64 range reads back.
    for (auto v :
         {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}) {
      EXPECT_EQ(timestamp_of(timestamp_text(u.type, v), u.type), v) << timestamp_text(u.type, v);
    }
  }
  EXPECT_EQ(timestamp_text(type_id::timestamp_ms, 1), "1970-01-01 00:00:00.001");
  EXPECT_EQ(timestamp_text(type_id::timestamp_us, 1614834367123456), "2021-03-04 05:06:07.123456");
  EXPECT_EQ(timestamp_of("2021-03-04 05:06:07.123456789", type_id::timestamp_ns),
            1614834367123456789);
  EXPECT_EQ(timestamp_text(type_id::timestamp_ns, std::numeric_limits<std::int64_t>::min()),
            "1677-09-21 00:12:43.145224192");
  EXPECT_EQ(timestamp_text(type_id::timestamp_ns, std::numeric_limits<std::int64_t>::max()),
            "2262-04-11 23:47:16.854775807");
}

TEST(TypedText, BadTimestampsAreErrors) {
  std::int64_t v = 0;
  auto const ms = type_id::timestamp_ms;
  expect_why(text::parse_timestamp("2021-03-04 05:06:07.1234", ms, v),
             {"'2021-03-04 05:06:07.1234' has 4 digits of fraction", "timestamp_ms holds 3"});
  expect_why(text::parse_timestamp("2021-03-04 05:06:07.5", type_id::timestamp_s, v),
             {"timestamp_s holds whole seconds"});
  expect_why(text::parse_timestamp("2021-03-04 05:06:07.1234567890", type_id::timestamp_ns, v),
             {"10 digits of fraction"});
  expect_why(text::parse_timestamp("2021-02-29 00:00:00", ms, v),
             {"is not a timestamp", "2021-02 has 28 days"});
  expect_why(text::parse_timestamp("2021-03-04 24:00:00", ms, v), {"hour 24 is not 0 to 23"});
  expect_why(text::parse_timestamp("2021-03-04 05:60:00", ms, v), {"minute 60"});
  expect_why(text::parse_timestamp("2021-03-04 05:06:60", ms, v), {"second 60"});
  for (auto const* bad : {"2021-03-04 05:06", "2021-03-04 05:06:07.", "2021-03-04x05:06:07",
                          "2021-03-04 ", "2021-03-04 5:06:07", "2021-03-04 05:06:07Z", ""}) {
    expect_why(text::parse_timestamp(bad, ms, v),
               {"is not a timestamp (expected YYYY-MM-DD HH:MM:SS[.fraction])"});
  }
  expect_why(text::parse_timestamp("2262-04-11 23:47:16.854775808", type_id::timestamp_ns, v),
             {"out of range for timestamp_ns", "(1677-09-21 00:12:43.145224192 to "});
  expect_why(text::parse_timestamp("2300-01-01", type_id::timestamp_ns, v), {"out of range"});
}

TEST(TypedText, Bools) {
  std::uint8_t v = 7;
  for (auto const* t : {"true", "True", "TRUE", "t", "1"}) {
    EXPECT_EQ(text::parse_bool(t, v), "") << t;
    EXPECT_EQ(v, 1) << t;
  }
  for (auto const* f : {"false", "False", "FALSE", "f", "0"}) {
    EXPECT_EQ(text::parse_bool(f, v), "") << f;
    EXPECT_EQ(v, 0) << f;
  }
  for (auto const* bad : {"yes", "no", "2", "", "tRUE", "T", " true", "01"}) {
    expect_why(text::parse_bool(bad, v),
               {"'" + std::string(bad) + "' is not a bool", "true/false"});
  }
  EXPECT_EQ(bool_text(1), "true");
  EXPECT_EQ(bool_text(0), "false");
}

TEST(TypedText, DecimalsFixedPoint) {
  decimal_format const f{12, 2};
  struct known {
    char const* in;
    std::int64_t value;
    char const* out;
  };
  for (auto const& k : {known{"123.45", 12345, "123.45"}, known{"-0.05", -5, "-0.05"},
                        known{"+3", 300, "3.00"}, known{"7.", 700, "7.00"}, known{".5", 50, "0.50"},
                        known{"-0.5", -50, "-0.50"}, known{"0", 0, "0.00"}, known{"-0", 0, "0.00"},
                        known{"0009999999999.99", 999999999999, "9999999999.99"},
                        known{"-9999999999.99", -999999999999, "-9999999999.99"}}) {
    EXPECT_EQ(decimal_of(k.in, f), k.value) << k.in;
    EXPECT_EQ(decimal_text(k.value, f.scale), k.out) << k.in;
  }
  EXPECT_EQ(decimal_text(42, 0), "42");
  EXPECT_EQ(decimal_text(-7, 5), "-0.00007");
  EXPECT_EQ(decimal_of("-0.00007", {18, 5}), -7);

  i128 v = 0;
  expect_why(text::parse_decimal("1.234", f, v),
             {"'1.234' has 3 digits after the point but the scale is 2", "not rounded"});
  expect_why(
    text::parse_decimal("12345678901", f, v),
    {"'12345678901' has more digits than precision 12 holds (at most 10 before the point)"});
  expect_why(text::parse_decimal("1000", {5, 2}, v), {"more digits than precision 5"});
  EXPECT_EQ(text::parse_decimal("999.99", {5, 2}, v), "");
  for (auto const* bad : {"", "-", "+", ".", "abc", "1e5", "--1", "1.2.3", "1,5", " 1", "0x10"}) {
    expect_why(text::parse_decimal(bad, f, v), {"is not a decimal number"});
  }

  // decimal128 past 2^64, and at 38 digits.
  decimal_format const wide{38, 4};
  auto const big = static_cast<i128>(1234567890123456789LL) * pow10(8) + 1234567;  // 27 digits
  EXPECT_GT(big, static_cast<i128>(std::numeric_limits<std::uint64_t>::max()));
  EXPECT_EQ(decimal_of("12345678901234567890123.4567", wide), big);
  EXPECT_EQ(decimal_text(big, 4), "12345678901234567890123.4567");
  auto const most = pow10(38) - 1;
  std::string const nines = std::string(34, '9') + "." + std::string(4, '9');
  EXPECT_EQ(decimal_of(nines, wide), most);
  EXPECT_EQ(decimal_text(most, 4), nines);
  EXPECT_EQ(decimal_of("-" + nines, wide), -most);
  EXPECT_EQ(decimal_text(-most, 4), "-" + nines);
  expect_why(text::parse_decimal("1" + nines, wide, v), {"more digits than precision 38"});
  EXPECT_EQ(decimal_text(1, 38), "0." + std::string(37, '0') + "1");
  // Any 128-bit integer formats, whatever its precision says.
  auto const lowest = std::numeric_limits<i128>::min();
  EXPECT_EQ(decimal_text(lowest, 0), "-170141183460469231731687303715884105728");
  EXPECT_EQ(decimal_text(lowest, 38), "-1.70141183460469231731687303715884105728");

  // A decimal64 holds 18 digits.
  std::int64_t d64 = 0;
  EXPECT_EQ(text::parse_logical("999999999999999999", type_id::decimal64, {18, 0}, &d64), "");
  EXPECT_EQ(d64, 999999999999999999);
  expect_why(text::parse_logical("9999999999999999999", type_id::decimal64, {18, 0}, &d64),
             {"precision 18"});
}

TEST(TypedText, TypeAnnotations) {
  struct known {
    char const* text;
    type_id type;
    decimal_format f;
  };
  for (auto const& k : {known{"bool", type_id::bool8, {}}, known{"boolean", type_id::bool8, {}},
                        known{"date32", type_id::date32, {}}, known{"date", type_id::date32, {}},
                        known{"timestamp", type_id::timestamp_us, {}},
                        known{"timestamp_ns", type_id::timestamp_ns, {}},
                        known{"decimal64(12,2)", type_id::decimal64, {12, 2}},
                        known{"decimal64(7)", type_id::decimal64, {7, 0}},
                        known{"decimal128( 38 , 4 )", type_id::decimal128, {38, 4}},
                        known{"decimal64 (18,18)", type_id::decimal64, {18, 18}},
                        known{"int32", type_id::int32, {}}}) {
    type_id t = type_id::int8;
    decimal_format f{};
    EXPECT_EQ(text::parse_type_annotation(k.text, t, f), "") << k.text;
    EXPECT_EQ(t, k.type) << k.text;
    if (joinery::is_decimal(t)) { EXPECT_EQ(f, k.f) << k.text; }
  }
  // Every type's annotation reads back as itself.
  for (int i = 0; i <= static_cast<int>(type_id::decimal128); ++i) {
    auto const t = static_cast<type_id>(i);
    decimal_format const f{joinery::is_decimal(t) ? std::uint8_t{9} : std::uint8_t{18},
                           joinery::is_decimal(t) ? std::int8_t{3} : std::int8_t{0}};
    type_id back = type_id::int8;
    decimal_format fb{};
    EXPECT_EQ(text::parse_type_annotation(text::type_annotation(t, f), back, fb), "");
    EXPECT_EQ(back, t);
    if (joinery::is_decimal(t)) { EXPECT_EQ(fb, f); }
  }
  EXPECT_EQ(text::type_annotation(type_id::decimal64, {12, 2}), "decimal64(12,2)");
  type_id t{};
  decimal_format f{};
  expect_why(text::parse_type_annotation("decimal64", t, f),
             {"needs its precision and scale", "decimal64(12,2)"});
  expect_why(text::parse_type_annotation("decimal64(19,2)", t, f),
             {"a decimal64's precision is 1 to 18"});
  expect_why(text::parse_type_annotation("decimal128(39,0)", t, f), {"precision is 1 to 38"});
  expect_why(text::parse_type_annotation("decimal64(0)", t, f), {"precision is 1 to 18"});
  expect_why(text::parse_type_annotation("decimal64(5,6)", t, f),
             {"scale must be 0 to the precision (5)"});
  expect_why(text::parse_type_annotation("decimal64(5,-1)", t, f), {"scale must be 0"});
  for (auto const* bad : {"decimal64(12,2", "decimal64(12,2,1)", "decimal64()", "decimal64(a,b)"}) {
    expect_why(text::parse_type_annotation(bad, t, f), {"expected decimal64(precision,scale)"});
  }
  expect_why(text::parse_type_annotation("int32(4)", t, f),
             {"unknown type 'int32(4)'", "decimal128(precision,scale)"});
  expect_why(text::parse_type_annotation("datetime", t, f),
             {"unknown type 'datetime'", "date32 (or date)"});
}

// ---- CSV -------------------------------------------------------------------------------------

/// A host column of `type` from values (nullopt: NULL), stored as T.
template <class T>
column make_column(type_id type, std::vector<std::optional<T>> const& values,
                   decimal_format f = {}) {
  auto const n = static_cast<size_type>(values.size());
  column c(type, n);
  if (joinery::is_decimal(type)) { c.set_type(type, f); }
  EXPECT_EQ(joinery::size_of(type), sizeof(T));
  size_type nulls = 0;
  for (size_type i = 0; i < n; ++i) {
    T const v = values[static_cast<std::size_t>(i)].value_or(T{});
    std::memcpy(static_cast<char*>(c.data()) + i * static_cast<size_type>(sizeof(T)), &v, sizeof v);
    nulls += values[static_cast<std::size_t>(i)] ? 0 : 1;
  }
  if (nulls > 0) {
    auto* mask = c.make_nullable();
    for (size_type i = 0; i < n; ++i) {
      if (!values[static_cast<std::size_t>(i)]) {
        mask[i >> 3] &= static_cast<std::uint8_t>(~(1u << (i & 7)));
      }
    }
    c.set_null_count(nulls);
  }
  return c;
}

void expect_same_table(io::named_table const& got, io::named_table const& want) {
  ASSERT_EQ(got.names, want.names);
  for (size_type j = 0; j < static_cast<size_type>(want.names.size()); ++j) {
    auto const g = got.data.column(j).view();
    auto const w = want.data.column(j).view();
    expect_same_column(g, w, want.names[static_cast<std::size_t>(j)]);
    EXPECT_EQ(g.decimal(), w.decimal()) << want.names[static_cast<std::size_t>(j)];
  }
}

/// Every logical type, with NULLs and edge values.
io::named_table logical_table() {
  using std::nullopt;
  using o8 = std::optional<std::uint8_t>;
  using o32 = std::optional<std::int32_t>;
  using o64 = std::optional<std::int64_t>;
  using o128 = std::optional<i128>;
  io::named_table t;
  t.names = {"id", "b", "d", "s", "ms", "us", "ns", "p", "q"};
  std::vector<column> cols;
  cols.push_back(make_column<std::int64_t>(type_id::int64, {o64{1}, o64{2}, o64{3}, o64{4}}));
  cols.push_back(make_column<std::uint8_t>(type_id::bool8, {o8{1}, o8{0}, nullopt, o8{1}}));
  cols.push_back(
    make_column<std::int32_t>(type_id::date32, {o32{0}, o32{-1}, o32{11016}, nullopt}));
  cols.push_back(
    make_column<std::int64_t>(type_id::timestamp_s, {o64{1614834367}, nullopt, o64{-1}, o64{0}}));
  cols.push_back(make_column<std::int64_t>(type_id::timestamp_ms,
                                           {o64{1614834367123}, o64{-1}, nullopt, o64{0}}));
  cols.push_back(make_column<std::int64_t>(
    type_id::timestamp_us, {nullopt, o64{1614834367000000}, o64{1}, o64{-616851000000000}}));
  cols.push_back(make_column<std::int64_t>(
    type_id::timestamp_ns, {o64{std::numeric_limits<std::int64_t>::max()}, o64{500000000},
                            o64{std::numeric_limits<std::int64_t>::min()}, nullopt}));
  cols.push_back(
    make_column<std::int64_t>(type_id::decimal64, {o64{12345}, o64{-5}, nullopt, o64{0}}, {12, 2}));
  cols.push_back(make_column<i128>(
    type_id::decimal128, {o128{pow10(30) * 3 + 7}, nullopt, o128{-(pow10(38) - 1)}, o128{-1}},
    {38, 4}));
  t.data = joinery::table(std::move(cols));
  return t;
}

TEST(CsvLogical, ReadWriteReadKeepsEveryValue) {
  temp_dir dir;
  // Typed headers (aliases, an unquoted and a quoted decimal annotation), blanks, the null
  // literal and empty fields.
  write_bytes(
    dir / "in.csv",
    "id,b:bool,d:date,s:timestamp_s,ms:timestamp_ms,us:timestamp,ns:timestamp_ns,"
    "p:decimal64(12, 2),\"q:decimal128(38,4)\"\n"
    "1,true,1970-01-01,2021-03-04 05:06:07,2021-03-04T05:06:07.123,,"
    "2262-04-11 23:47:16.854775807,123.45,300000000000000000000000000.0007\n"
    "2, f ,1969-12-31,NULL,1969-12-31 23:59:59.999,2021-03-04 05:06:07,1970-01-01 00:00:00.5,"
    "-0.05,\n"
    "3,,2000-02-29,1969-12-31 23:59:59,,1970-01-01 00:00:00.000001,"
    "1677-09-21 00:12:43.145224192,NULL,-" +
      std::string(34, '9') +
      ".9999\n"
      "4,1,,1970-01-01,1970-01-01,1950-06-15 12:30:00,,+0,\"-0.0001\"\n");
  io::csv_options o;
  o.null_literal = "NULL";
  auto const in = io::read_csv(dir / "in.csv", o);
  auto const want = logical_table();
  expect_same_table(in, want);

  io::write_csv(dir / "out.csv", want.names, want.view());
  EXPECT_EQ(
    read_bytes(dir / "out.csv"),
    "id,b:bool,d:date32,s:timestamp_s,ms:timestamp_ms,us:timestamp_us,ns:timestamp_ns,"
    "\"p:decimal64(12,2)\",\"q:decimal128(38,4)\"\n"
    "1,true,1970-01-01,2021-03-04 05:06:07,2021-03-04 05:06:07.123,,"
    "2262-04-11 23:47:16.854775807,123.45,300000000000000000000000000.0007\n"
    "2,false,1969-12-31,,1969-12-31 23:59:59.999,2021-03-04 05:06:07,"
    "1970-01-01 00:00:00.500000000,-0.05,\n"
    "3,,2000-02-29,1969-12-31 23:59:59,,1970-01-01 00:00:00.000001,"
    "1677-09-21 00:12:43.145224192,,-" +
      std::string(34, '9') +
      ".9999\n"
      "4,true,,1970-01-01 00:00:00,1970-01-01 00:00:00,1950-06-15 12:30:00,,0.00,-0.0001\n");
  expect_same_table(io::read_csv(dir / "out.csv"), want);

  // Batch by batch: the header takes the decimals' formats from the first batch.
  {
    std::vector<type_id> types;
    for (auto const& c : want.view()) { types.push_back(c.type()); }
    io::table_writer w(dir / "batches.csv", want.names, types);
    w.append(want.view());
    w.append(want.view());
    w.finish();
  }
  auto const twice = io::read_csv(dir / "batches.csv");
  ASSERT_EQ(twice.data.num_rows(), 8);
  auto const first_line = [](std::string const& s) { return s.substr(0, s.find('\n')); };
  EXPECT_EQ(first_line(read_bytes(dir / "batches.csv")), first_line(read_bytes(dir / "out.csv")));
  EXPECT_EQ(twice.data.column(8).view().decimal(), (decimal_format{38, 4}));
  EXPECT_EQ(twice.names, want.names);
}

TEST(CsvLogical, ManyRowsAcrossParallelChunks) {
  temp_dir dir;
  auto const old = text::set_csv_min_chunk_bytes(256);
  std::mt19937_64 rng(43);
  size_type const rows = 5000;
  std::vector<std::optional<std::int32_t>> days;
  std::vector<std::optional<std::int64_t>> ns, cents;
  std::vector<std::optional<std::uint8_t>> flags;
  for (size_type i = 0; i < rows; ++i) {
    bool const null = rng() % 7 == 0;
    days.emplace_back(
      null ? std::nullopt
           : std::optional<std::int32_t>(static_cast<std::int32_t>(rng() % 4000000) - 1000000));
    ns.emplace_back(static_cast<std::int64_t>(rng()));
    cents.emplace_back(null ? std::nullopt
                            : std::optional<std::int64_t>(
                                static_cast<std::int64_t>(rng() % 2000000000000) - 1000000000000));
    flags.emplace_back(static_cast<std::uint8_t>(rng() & 1));
  }
  io::named_table t;
  t.names = {"d", "ns", "p", "b"};
  std::vector<column> cols;
  cols.push_back(make_column(type_id::date32, days));
  cols.push_back(make_column(type_id::timestamp_ns, ns));
  cols.push_back(make_column(type_id::decimal64, cents, {13, 3}));
  cols.push_back(make_column(type_id::bool8, flags));
  t.data = joinery::table(std::move(cols));
  io::write_csv(dir / "many.csv", t.names, t.view());
  expect_same_table(io::read_csv(dir / "many.csv"), t);
  text::set_csv_min_chunk_bytes(old);
}

TEST(CsvLogical, BadValuesNameLineAndColumn) {
  temp_dir dir;
  struct bad_file {
    std::string csv;
    std::vector<std::string> parts;  // of the message
  };
  std::vector<bad_file> const bad{
    {"k,d:date32\n1,2021-01-01\n2,2021-02-30\n",
     {"line 3", "column 'd'", "'2021-02-30' is not a date", "28 days"}},
    {"k,d:date32\n1,2021-13-01\n", {"line 2", "no month 13"}},
    {"b:bool,k\nyes,1\n", {"line 2", "column 'b'", "'yes' is not a bool"}},
    {"k,t:timestamp_ms\n1,2021-01-01 00:00:00.1234\n",
     {"line 2", "column 't'", "4 digits of fraction"}},
    {"k,p:decimal64(4,2)\n1,123.4\n",
     {"line 2", "column 'p'", "'123.4' has more digits than precision 4"}},
    {"k,p:decimal64(6,2)\n1,1.234\n",
     {"column 'p'", "3 digits after the point but the scale is 2"}},
    {"k,d:date32\n1,\"2021-\"\"01\"\n", {"column 'd'", "is not a date32"}},
    {"k,p:decimal64(19,2)\n1,1\n", {"line 1 (header)", "column 'p'", "precision is 1 to 18"}},
    {"k,p:decimal128\n1,1\n", {"line 1 (header)", "column 'p'", "needs its precision and scale"}},
    {"k,p:decimal64(12\n1,1\n", {"line 1 (header)", "expected decimal64(precision,scale)"}},
    {"k,t:time\n1,1\n", {"unknown type 'time'", "timestamp_ns"}}};
  for (auto const& b : bad) {
    write_bytes(dir / "bad.csv", b.csv);
    try {
      (void)io::read_csv(dir / "bad.csv");
      ADD_FAILURE() << "read without an error: " << b.csv;
    } catch (joinery::input_error const& e) {
      std::string const msg = e.what();
      for (auto const& part : b.parts) {
        EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' missing from: " << msg;
      }
    }
  }
}

// ---- .npy ------------------------------------------------------------------------------------

TEST(NpyLogical, DatesTimestampsAndBoolsRoundTrip) {
  temp_dir dir;
  using o32 = std::optional<std::int32_t>;
  using o64 = std::optional<std::int64_t>;
  auto const dates = make_column<std::int32_t>(
    type_id::date32, {o32{0}, o32{-1}, o32{11016}, o32{std::numeric_limits<std::int32_t>::min()},
                      o32{std::numeric_limits<std::int32_t>::max()}});
  io::write_npy(dir / "d.npy", dates);
  auto const bytes = read_bytes(dir / "d.npy");
  EXPECT_NE(bytes.find("'descr': '<M8[D]'"), std::string::npos);
  ASSERT_EQ(bytes.size(), 128 + 5 * 8);  // datetime64[D] is 8 bytes a day
  std::int64_t second_day = 0;
  std::memcpy(&second_day, bytes.data() + 128 + 8, 8);
  EXPECT_EQ(second_day, -1);
  expect_same_column(io::read_npy(dir / "d.npy"), dates, "d");

  struct unit {
    type_id type;
    char const* descr;
  };
  for (auto const& u :
       {unit{type_id::timestamp_s, "<M8[s]"}, unit{type_id::timestamp_ms, "<M8[ms]"},
        unit{type_id::timestamp_us, "<M8[us]"}, unit{type_id::timestamp_ns, "<M8[ns]"}}) {
    auto const c = make_column<std::int64_t>(
      u.type, {o64{0}, o64{-1}, o64{1614834367123}, o64{std::numeric_limits<std::int64_t>::max()}});
    auto const p = dir / (std::string(joinery::to_string(u.type)) + ".npy");
    io::write_npy(p, c);
    EXPECT_NE(read_bytes(p).find(std::string("'descr': '") + u.descr + "'"), std::string::npos);
    expect_same_column(io::read_npy(p), c, u.descr);
  }
  auto const flags =
    make_column<std::uint8_t>(type_id::bool8, {std::uint8_t{1}, std::uint8_t{0}, std::uint8_t{1}});
  io::write_npy(dir / "b.npy", flags);
  EXPECT_NE(read_bytes(dir / "b.npy").find("'descr': '|b1'"), std::string::npos);
  expect_same_column(io::read_npy(dir / "b.npy"), flags, "b");

  // A directory, written whole and batch by batch (dates widened per batch).
  io::named_table t;
  t.names = {"b", "d", "t"};
  std::vector<column> cols;
  cols.push_back(column::copy_of(flags.view()));
  cols.push_back(
    make_column<std::int32_t>(type_id::date32, {o32{18690}, o32{-719162}, o32{2932896}}));
  cols.push_back(make_column<std::int64_t>(type_id::timestamp_us, {o64{1}, o64{2}, o64{-3}}));
  t.data = joinery::table(std::move(cols));
  io::write_npy_dir(dir / "all", t.names, t.view());
  expect_same_table(io::read_npy_dir(dir / "all"), t);
  {
    io::table_writer w(dir / "batches", t.names,
                       {type_id::bool8, type_id::date32, type_id::timestamp_us});
    w.append(t.view());
    w.append(t.view());
    w.finish();
  }
  auto const twice = io::read_npy_dir(dir / "batches");
  ASSERT_EQ(twice.data.num_rows(), 6);
  EXPECT_EQ(static_cast<std::int32_t const*>(twice.data.column(1).view().data())[4], -719162);
  EXPECT_EQ(twice.data.column(0).type(), type_id::bool8);
}

TEST(NpyLogical, DecimalsNaTAndBadValuesAreRefused) {
  temp_dir dir;
  using o64 = std::optional<std::int64_t>;
  auto const cents = make_column<std::int64_t>(type_id::decimal64, {o64{1}, o64{2}}, {12, 2});
  expect_error<joinery::logic_error>([&] { io::write_npy(dir / "p.npy", cents); },
                                     {"decimal64 column", ".npy holds no decimals", "write CSV"});
  expect_error<joinery::logic_error>(
    [&] {
      io::table_writer w(dir / "w", {"k", "q"}, {type_id::int64, type_id::decimal128});
    },
    {"column 'q'", "decimal128 column", "write CSV"});
  io::named_table t;
  t.names = {"p"};
  std::vector<column> cols;
  cols.push_back(column::copy_of(cents.view()));
  t.data = joinery::table(std::move(cols));
  expect_error<joinery::logic_error>([&] { io::write_table(dir / "out", t.names, t.view()); },
                                     {"column 'p'", "decimals", "write CSV"});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{});

  auto const nat = std::numeric_limits<std::int64_t>::min();
  write_bytes(dir / "nat.npy",
              npy_bytes(1, dict_for("<M8[ns]", "(3,)"), raw(std::vector<std::int64_t>{1, nat, 3})));
  expect_error<joinery::input_error>([&] { (void)io::read_npy(dir / "nat.npy"); },
                                     {"nat.npy", "row 1 is NaT", "no nulls"});
  write_bytes(dir / "natd.npy",
              npy_bytes(1, dict_for("<M8[D]", "(2,)"), raw(std::vector<std::int64_t>{nat, 3})));
  expect_error<joinery::input_error>([&] { (void)io::read_npy(dir / "natd.npy"); },
                                     {"row 0 is NaT"});
  write_bytes(dir / "far.npy", npy_bytes(1, dict_for("<M8[D]", "(2,)"),
                                         raw(std::vector<std::int64_t>{3, std::int64_t{1} << 40})));
  expect_error<joinery::input_error>([&] { (void)io::read_npy(dir / "far.npy"); },
                                     {"row 1", "out of date32's range"});
  write_bytes(dir / "b.npy", npy_bytes(1, dict_for("|b1", "(3,)"), std::string("\x01\x00\x02", 3)));
  expect_error<joinery::input_error>([&] { (void)io::read_npy(dir / "b.npy"); },
                                     {"row 2", "byte 2", "bools are 0 or 1"});
  write_bytes(dir / "h.npy",
              npy_bytes(1, dict_for("<M8[h]", "(1,)"), raw(std::vector<std::int64_t>{1})));
  expect_error<joinery::input_error>([&] { (void)io::read_npy(dir / "h.npy"); },
                                     {"unsupported dtype '<M8[h]'", "<M8[D] <M8[s]"});
  write_bytes(dir / "o.npy", npy_bytes(1, dict_for("|O", "(1,)"), std::string(8, 'x')));
  expect_error<joinery::input_error>([&] { (void)io::read_npy(dir / "o.npy"); },
                                     {"decimal128(precision,scale)"});
  // A truncated datetime64[D] file is measured in 8-byte days.
  write_bytes(dir / "short.npy", npy_bytes(1, dict_for("<M8[D]", "(2,)"), std::string(12, '\0')));
  expect_error<joinery::input_error>([&] { (void)io::read_npy(dir / "short.npy"); },
                                     {"truncated data", "16 bytes"});
}

TEST(FormatValue, EveryTypeAsTheWriterWritesIt) {
  auto const t = logical_table();
  auto const v = t.view();
  EXPECT_EQ(io::format_value(v.column(1), 0), "true");
  EXPECT_EQ(io::format_value(v.column(1), 2), "");  // NULL
  EXPECT_EQ(io::format_value(v.column(2), 2), "2000-02-29");
  EXPECT_EQ(io::format_value(v.column(4), 0), "2021-03-04 05:06:07.123");
  EXPECT_EQ(io::format_value(v.column(7), 1), "-0.05");
  EXPECT_EQ(io::format_value(v.column(8), 3), "-0.0001");
  EXPECT_EQ(io::format_value(v.column(0), 3), "4");
  std::vector<double> d{0.1};
  EXPECT_EQ(
    io::format_value(column_view(type_id::float64, d.data(), 1, joinery::memory_space::host), 0),
    "0.1");
  std::vector<std::int32_t> offsets{0, 3};
  auto const s =
    column_view::strings(type_id::string, offsets.data(), "a,b", 1, joinery::memory_space::host);
  EXPECT_EQ(io::format_value(s, 0), "a,b");  // unquoted
  EXPECT_THROW((void)io::format_value(v.column(0), 4), joinery::logic_error);
}

}  // namespace
