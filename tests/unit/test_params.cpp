// Unit under test: results/model/params.cpp — parse_param (every type and unit
// suffix, canonical text, bounds, overflow), format_size, Cell and MachineFacts.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "results/model/params.h"
#include "workloads/sys/probe.h"

namespace nightjar {
namespace {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = 1024 * KiB;
constexpr std::uint64_t GiB = 1024 * MiB;
constexpr std::uint64_t TiB = 1024 * GiB;

ParamDescriptor desc(const std::string& name, ParamType type) {
  ParamDescriptor d;
  d.name = name;
  d.type = type;
  return d;
}

MachineFacts machine(std::uint64_t mem = 16 * GiB, unsigned cpus = 8) {
  MachineFacts m;
  m.mem_total_bytes = mem;
  m.cpus = cpus;
  return m;
}

ParamValue parse(ParamType type, const std::string& text, const MachineFacts& m = machine()) {
  return parse_param(desc("p", type), text, m);
}

// The ParamError message for `text`, or "" when it parses.
std::string error(const ParamDescriptor& d, const std::string& text,
                  const MachineFacts& m = machine()) {
  try {
    parse_param(d, text, m);
  } catch (const ParamError& e) {
    EXPECT_EQ(e.field, d.name);
    return e.message;
  }
  return "";
}

std::string error(ParamType type, const std::string& text, const MachineFacts& m = machine()) {
  return error(desc("p", type), text, m);
}

TEST(ParamType, ToString) {
  EXPECT_STREQ(to_string(ParamType::count), "count");
  EXPECT_STREQ(to_string(ParamType::size), "size");
  EXPECT_STREQ(to_string(ParamType::duration), "duration");
  EXPECT_STREQ(to_string(ParamType::number), "number");
  EXPECT_STREQ(to_string(ParamType::text), "text");
  EXPECT_STREQ(to_string(ParamType::choice), "choice");
  EXPECT_STREQ(to_string(ParamType::flag), "flag");
}

TEST(FormatSize, LargestExactBinarySuffix) {
  EXPECT_EQ(format_size(0), "0");
  EXPECT_EQ(format_size(1), "1");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(1536), "1536");
  EXPECT_EQ(format_size(1024), "1K");
  EXPECT_EQ(format_size(10240), "10K");
  EXPECT_EQ(format_size(1536 * KiB), "1536K");
  EXPECT_EQ(format_size(268435456), "256M");
  EXPECT_EQ(format_size(GiB), "1G");
  EXPECT_EQ(format_size(3 * TiB), "3T");
  EXPECT_EQ(format_size(1024 * TiB), "1024T");
  EXPECT_EQ(format_size(UINT64_MAX), "18446744073709551615");
}

// ---- size --------------------------------------------------------------------

TEST(ParseSize, PlainBytes) {
  ParamValue v = parse(ParamType::size, "4096");
  EXPECT_EQ(v.text, "4K");
  EXPECT_EQ(v.number, 4096);
  EXPECT_EQ(parse(ParamType::size, "1000").text, "1000");
  EXPECT_EQ(parse(ParamType::size, "0").text, "0");
}

TEST(ParseSize, BinarySuffixes) {
  EXPECT_EQ(parse(ParamType::size, "10K").number, 10 * KiB);
  EXPECT_EQ(parse(ParamType::size, "1M").number, MiB);
  EXPECT_EQ(parse(ParamType::size, "1G").number, GiB);
  EXPECT_EQ(parse(ParamType::size, "1T").number, TiB);
  EXPECT_EQ(parse(ParamType::size, "2KiB").number, 2 * KiB);
  EXPECT_EQ(parse(ParamType::size, "3MiB").number, 3 * MiB);
  EXPECT_EQ(parse(ParamType::size, "4GiB").number, 4 * GiB);
  EXPECT_EQ(parse(ParamType::size, "5TiB").number, 5 * TiB);
  EXPECT_EQ(parse(ParamType::size, "2KiB").text, "2K");
  EXPECT_EQ(parse(ParamType::size, "1024K").text, "1M");
  EXPECT_EQ(parse(ParamType::size, "1.5K").number, 1536);
  EXPECT_EQ(parse(ParamType::size, "0.5G").text, "512M");
}

TEST(ParseSize, DecimalSuffixesAsNetperf) {
  EXPECT_EQ(parse(ParamType::size, "10k").number, 10000);
  EXPECT_EQ(parse(ParamType::size, "10k").text, "10000");
  EXPECT_EQ(parse(ParamType::size, "1m").number, 1e6);
  EXPECT_EQ(parse(ParamType::size, "1g").number, 1e9);
  EXPECT_EQ(parse(ParamType::size, "2.5k").number, 2500);
}

TEST(ParseSize, SameBytesSameCanonicalText) {
  EXPECT_EQ(parse(ParamType::size, "10240").text, parse(ParamType::size, "10K").text);
  EXPECT_EQ(parse(ParamType::size, "10K").text, parse(ParamType::size, "10KiB").text);
  EXPECT_EQ(parse(ParamType::size, " 10K ").text, "10K");
  EXPECT_EQ(parse(ParamType::size, "8192k").text, "8000K");
}

TEST(ParseSize, PercentOfMemoryRoundsDownToPage) {
  // 10000 pages + 123 bytes; 20% = 2000 pages + 24.6 bytes -> 2000 pages.
  MachineFacts m = machine(10000 * 4096 + 123);
  ParamValue v = parse(ParamType::size, "20%mem", m);
  EXPECT_EQ(v.text, "20%mem");
  EXPECT_EQ(v.number, 2000 * 4096);
  // 33% of 10000 pages = 3300 pages + a fraction
  EXPECT_EQ(parse(ParamType::size, "33%mem", m).number, 3300 * 4096);
  // 0.01% of 10000 pages = 1 page + 0.0123 bytes
  EXPECT_EQ(parse(ParamType::size, "0.01%mem", m).number, 4096);
  EXPECT_EQ(parse(ParamType::size, "12.5%mem", machine(8 * GiB)).number, GiB);
}

TEST(ParseSize, PercentOfMemoryCanonicalText) {
  EXPECT_EQ(parse(ParamType::size, "20.0%mem").text, "20%mem");
  EXPECT_EQ(parse(ParamType::size, "020%mem").text, "20%mem");
  EXPECT_EQ(parse(ParamType::size, "12.50%mem").text, "12.5%mem");
  EXPECT_EQ(parse(ParamType::size, "0.5%mem").text, "0.5%mem");
  EXPECT_EQ(parse(ParamType::size, "150%mem", machine(GiB)).number, 1.5 * GiB);
}

TEST(ParseSize, BadSuffix) {
  EXPECT_EQ(error(desc("size", ParamType::size), "10Q"),
            "'10Q' has an unknown suffix; write bytes or use K, M, G, T (powers of 2), k, m, g "
            "(powers of 10) or N%mem");
  EXPECT_NE(error(ParamType::size, "10KB").find("unknown suffix"), std::string::npos);
  EXPECT_NE(error(ParamType::size, "10 K").find("unknown suffix"), std::string::npos);
  EXPECT_NE(error(ParamType::size, "20%cpus").find("unknown suffix"), std::string::npos);
}

TEST(ParseSize, NotASize) {
  EXPECT_EQ(error(ParamType::size, "big"),
            "'big' is not a size; write bytes or use K, M, G, T (powers of 2), k, m, g (powers of "
            "10) or N%mem");
  EXPECT_NE(error(ParamType::size, "-1K").find("'-1K' is a negative size;"), std::string::npos);
  EXPECT_NE(error(ParamType::size, "0.3K").find("'0.3K' is not a whole number of bytes;"),
            std::string::npos);
  EXPECT_NE(error(ParamType::size, "").find("empty value"), std::string::npos);
}

TEST(ParseSize, Overflow) {
  EXPECT_EQ(parse(ParamType::size, "18446744073709551615").number, 18446744073709551615.0);
  EXPECT_NE(error(ParamType::size, "18446744073709551616").find("too large"), std::string::npos);
  EXPECT_NE(error(ParamType::size, "16777216T").find("too large"), std::string::npos);
  EXPECT_NE(
      error(ParamType::size, "99999999999999999999999999999999999999999999G").find("too large"),
      std::string::npos);
  EXPECT_EQ(parse(ParamType::size, "16777215T").text, "16777215T");
}

TEST(ParseSize, PercentOfMemoryNeedsMemTotal) {
  EXPECT_EQ(error(ParamType::size, "20%mem", machine(0)),
            "'20%mem' needs the machine's memory size, which is unknown; write an absolute size "
            "such as 1G");
  EXPECT_NE(error(ParamType::size, "0%mem").find("is zero"), std::string::npos);
}

// ---- duration ------------------------------------------------------------------

TEST(ParseDuration, Suffixes) {
  EXPECT_EQ(parse(ParamType::duration, "60s").number, 60);
  EXPECT_EQ(parse(ParamType::duration, "60").number, 60);
  EXPECT_EQ(parse(ParamType::duration, "500ms").number, 0.5);
  EXPECT_EQ(parse(ParamType::duration, "2m").number, 120);
  EXPECT_EQ(parse(ParamType::duration, "1h").number, 3600);
  EXPECT_EQ(parse(ParamType::duration, "1.5s").number, 1.5);
  EXPECT_EQ(parse(ParamType::duration, "0.25").number, 0.25);
}

TEST(ParseDuration, CanonicalText) {
  EXPECT_EQ(parse(ParamType::duration, "60").text, "60s");
  EXPECT_EQ(parse(ParamType::duration, "60s").text, "60s");
  EXPECT_EQ(parse(ParamType::duration, "1m").text, "60s");
  EXPECT_EQ(parse(ParamType::duration, "60000ms").text, "60s");
  EXPECT_EQ(parse(ParamType::duration, "1h").text, "3600s");
  EXPECT_EQ(parse(ParamType::duration, "500ms").text, "500ms");
  EXPECT_EQ(parse(ParamType::duration, "0.5s").text, "500ms");
  EXPECT_EQ(parse(ParamType::duration, "1.5s").text, "1500ms");
  EXPECT_EQ(parse(ParamType::duration, "0.0015s").text, "0.0015s");
  EXPECT_EQ(parse(ParamType::duration, "0").text, "0s");
}

TEST(ParseDuration, Errors) {
  EXPECT_EQ(error(desc("duration", ParamType::duration), "5d"),
            "'5d' has an unknown suffix; write seconds or use ms, s, m, h (such as 500ms, 60s, "
            "2m, 1h)");
  EXPECT_NE(error(ParamType::duration, "-5s").find("'-5s' is a negative duration;"),
            std::string::npos);
  EXPECT_NE(error(ParamType::duration, "soon").find("'soon' is not a duration;"),
            std::string::npos);
  EXPECT_NE(error(ParamType::duration, "9999999999999999h").find("too long"), std::string::npos);
}

// ---- count ---------------------------------------------------------------------

TEST(ParseCount, Plain) {
  ParamValue v = parse(ParamType::count, "4");
  EXPECT_EQ(v.text, "4");
  EXPECT_EQ(v.number, 4);
  EXPECT_EQ(parse(ParamType::count, "04").text, "4");
  EXPECT_EQ(parse(ParamType::count, "4.0").text, "4");
  EXPECT_EQ(parse(ParamType::count, "0").text, "0");
}

TEST(ParseCount, PercentOfCpus) {
  ParamValue v = parse(ParamType::count, "100%cpus", machine(GiB, 8));
  EXPECT_EQ(v.text, "100%cpus");
  EXPECT_EQ(v.number, 8);
  EXPECT_EQ(parse(ParamType::count, "50%cpus", machine(GiB, 3)).number, 2);  // 1.5 rounds up
  EXPECT_EQ(parse(ParamType::count, "40%cpus", machine(GiB, 3)).number, 1);  // 1.2 rounds down
  EXPECT_EQ(parse(ParamType::count, "1%cpus", machine(GiB, 2)).number, 1);   // at least 1
  EXPECT_EQ(parse(ParamType::count, "200%cpus", machine(GiB, 2)).number, 4);
  EXPECT_EQ(parse(ParamType::count, "50.0%cpus").text, "50%cpus");
  EXPECT_NE(error(ParamType::count, "0%cpus").find("is zero"), std::string::npos);
}

TEST(ParseCount, RejectsNegativeFractionalAndJunk) {
  EXPECT_EQ(error(desc("clients", ParamType::count), "-1"),
            "'-1' is a negative count; write a whole number such as 4, or N%cpus such as "
            "100%cpus");
  EXPECT_EQ(error(desc("clients", ParamType::count), "2.5"),
            "'2.5' is not a whole number; write a whole number such as 4, or N%cpus such as "
            "100%cpus");
  EXPECT_NE(error(ParamType::count, "4x").find("'4x' has an unknown suffix;"), std::string::npos);
  EXPECT_NE(error(ParamType::count, "many").find("'many' is not a count;"), std::string::npos);
  EXPECT_NE(error(ParamType::count, "9223372036854775808").find("too large"), std::string::npos);
  EXPECT_EQ(parse(ParamType::count, "9223372036854775807").text, "9223372036854775807");
}

// ---- number, flag, choice, text ------------------------------------------------

TEST(ParseNumber, Reals) {
  EXPECT_EQ(parse(ParamType::number, "2.5").number, 2.5);
  EXPECT_EQ(parse(ParamType::number, "2.5").text, "2.5");
  EXPECT_EQ(parse(ParamType::number, "2.50").text, "2.5");
  EXPECT_EQ(parse(ParamType::number, "1e3").text, "1000");
  EXPECT_EQ(parse(ParamType::number, "-0.5").number, -0.5);
  EXPECT_EQ(parse(ParamType::number, "+3").text, "3");
  EXPECT_EQ(error(desc("ratio", ParamType::number), "abc"),
            "'abc' is not a number; write a number such as 2.5");
  EXPECT_NE(error(ParamType::number, "inf").find("not a number"), std::string::npos);
  EXPECT_NE(error(ParamType::number, "nan").find("not a number"), std::string::npos);
  EXPECT_NE(error(ParamType::number, "2.5x").find("not a number"), std::string::npos);
}

TEST(ParseFlag, AllSpellings) {
  for (const char* on : {"on", "true", "yes", "1", "ON", "True", "YES"}) {
    ParamValue v = parse(ParamType::flag, on);
    EXPECT_EQ(v.text, "on") << on;
    EXPECT_EQ(v.number, 1) << on;
  }
  for (const char* off : {"off", "false", "no", "0", "Off", "FALSE", "No"}) {
    ParamValue v = parse(ParamType::flag, off);
    EXPECT_EQ(v.text, "off") << off;
    EXPECT_EQ(v.number, 0) << off;
  }
  EXPECT_EQ(error(desc("thp", ParamType::flag), "maybe"),
            "'maybe' is not on or off; write on or off (also true/false, yes/no, 1/0)");
}

TEST(ParseChoice, MustBeOneOfChoices) {
  ParamDescriptor d = desc("mode", ParamType::choice);
  d.choices = {"threads", "processes"};
  EXPECT_EQ(parse_param(d, "processes", machine()).text, "processes");
  EXPECT_EQ(parse_param(d, "processes", machine()).number, 0);
  EXPECT_EQ(error(d, "thread"),
            "'thread' is not one of threads, processes; write one of them, such as threads or "
            "[threads, processes]");
  EXPECT_NE(error(d, "Threads").find("is not one of"), std::string::npos);
}

TEST(ParseText, KeptAsWritten) {
  EXPECT_EQ(parse(ParamType::text, "/tmp/x y").text, "/tmp/x y");
  EXPECT_EQ(parse(ParamType::text, "/tmp/x y").number, 0);
  EXPECT_EQ(parse(ParamType::text, "").text, "");  // text may be empty; other types may not
  EXPECT_NE(error(ParamType::count, " ").find("empty value"), std::string::npos);
}

// ---- bounds --------------------------------------------------------------------

TEST(Bounds, CountMinimum) {
  ParamDescriptor d = desc("clients", ParamType::count);
  d.min = 1;
  EXPECT_EQ(error(d, "0"), "0 is below the minimum 1; write a positive count such as 1 or [1, 2]");
  EXPECT_EQ(parse_param(d, "1", machine()).number, 1);
  d.min = 2;
  EXPECT_EQ(error(d, "1"),
            "1 is below the minimum 2; write a count of at least 2 such as 2 or [2, 3]");
}

TEST(Bounds, CountMaximumAndRelative) {
  ParamDescriptor d = desc("clients", ParamType::count);
  d.max = 4;
  EXPECT_EQ(error(d, "5"), "5 is above the maximum 4; write a count of at most 4 such as 4");
  EXPECT_EQ(error(d, "100%cpus", machine(GiB, 8)),
            "100%cpus (8) is above the maximum 4; write a count of at most 4 such as 4");
  EXPECT_EQ(parse_param(d, "50%cpus", machine(GiB, 8)).number, 4);
}

TEST(Bounds, SizeMinimumAndMaximum) {
  ParamDescriptor d = desc("size", ParamType::size);
  d.min = 4096;
  d.max = static_cast<double>(GiB);
  EXPECT_EQ(error(d, "0"),
            "0 is below the minimum 4K; write a size of at least 4K such as 4K or "
            "[4K, 8K]");
  EXPECT_EQ(error(d, "2G"), "2G is above the maximum 1G; write a size of at most 1G such as 1G");
  EXPECT_EQ(parse_param(d, "4K", machine()).number, 4096);
  EXPECT_EQ(parse_param(d, "1G", machine()).number, GiB);
  // A relative value shows what it resolved to.
  d.min = static_cast<double>(MiB);
  EXPECT_EQ(error(d, "0.01%mem", machine(GiB)),
            "0.01%mem (104K) is below the minimum 1M; write a size of at least 1M such as 1M or "
            "[1M, 2M]");
}

TEST(Bounds, DurationAndNumber) {
  ParamDescriptor d = desc("duration", ParamType::duration);
  d.min = 0.5;
  EXPECT_EQ(error(d, "100ms"),
            "100ms is below the minimum 500ms; write a duration of at least 500ms such as 500ms "
            "or [500ms, 1s]");
  ParamDescriptor n = desc("ratio", ParamType::number);
  n.max = 1;
  EXPECT_EQ(error(n, "1.5"), "1.5 is above the maximum 1; write a number of at most 1 such as 1");
}

// ---- Cell ----------------------------------------------------------------------

TEST(Cell, IdIsSortedAndCanonical) {
  Cell a;
  a.workload = "pft";
  a.params["size"] = parse(ParamType::size, "268435456");
  a.params["clients"] = parse(ParamType::count, "2");
  a.params["mode"] = ParamValue{"threads", 0};
  EXPECT_EQ(a.id(), "clients=2 mode=threads size=256M");
  Cell b = a;
  b.params["size"] = parse(ParamType::size, "256M");
  EXPECT_EQ(a.id(), b.id());
  EXPECT_EQ(Cell{}.id(), "");
}

TEST(Cell, TypedAccessors) {
  Cell c;
  c.params["clients"] = parse(ParamType::count, "6");
  c.params["share"] = parse(ParamType::count, "100%cpus", machine(GiB, 3));
  c.params["size"] = parse(ParamType::size, "10K");
  c.params["mem"] = parse(ParamType::size, "50%mem", machine(GiB));
  c.params["duration"] = parse(ParamType::duration, "500ms");
  c.params["thp"] = parse(ParamType::flag, "yes");
  c.params["mode"] = ParamValue{"threads", 0};
  c.params["ratio"] = parse(ParamType::number, "2.5");
  EXPECT_EQ(c.integer("clients"), 6);
  EXPECT_EQ(c.integer("share"), 3);
  EXPECT_EQ(c.bytes("size"), 10240u);
  EXPECT_EQ(c.bytes("mem"), GiB / 2);
  EXPECT_EQ(c.seconds("duration"), 0.5);
  EXPECT_TRUE(c.flag("thp"));
  EXPECT_EQ(c.text("mode"), "threads");
  EXPECT_EQ(c.number("ratio"), 2.5);
}

TEST(Cell, AccessorsAreExactBeyondDoublePrecision) {
  Cell c;
  c.params["size"] = parse(ParamType::size, "9007199254740993");  // 2^53 + 1
  c.params["n"] = parse(ParamType::count, "9007199254740993");
  EXPECT_EQ(c.bytes("size"), 9007199254740993u);
  EXPECT_EQ(c.integer("n"), 9007199254740993);
}

TEST(Cell, MissingParameterNamesIt) {
  Cell c;
  c.workload = "pft";
  try {
    (void)c.integer("clients");
    FAIL() << "expected std::out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("'clients'"), std::string::npos);
  }
  EXPECT_THROW((void)c.bytes("size"), std::out_of_range);
  EXPECT_THROW((void)c.text("mode"), std::out_of_range);
  EXPECT_THROW((void)c.flag("thp"), std::out_of_range);
  EXPECT_THROW((void)c.seconds("d"), std::out_of_range);
  EXPECT_THROW((void)c.number("r"), std::out_of_range);
}

TEST(MachineFacts, ProbeReadsThisMachine) {
  MachineFacts m = probe_machine_facts();
  EXPECT_GT(m.mem_total_bytes, 0u);
  EXPECT_EQ(m.mem_total_bytes % 1024, 0u);
  EXPECT_GE(m.cpus, 1u);
}

}  // namespace
}  // namespace nightjar

TEST(CellId, EmptyTextParametersAreLeftOut) {
  nightjar::Cell c{"fake", {{"script", {"", 0}}, {"seed", {"1", 1}}, {"value", {"100", 100}}}};
  EXPECT_EQ(c.id(), "seed=1 value=100");
}
