// Unit under test: the ownership journal (workloads/sys/journal.h) and the
// sweep (workloads/sys/sweep.h), in a temporary journal directory: the file
// format, the owner's lock and identity, the life of a file from the first
// record to the last done, and the sweep of an ended owner's objects (a
// simulated cgroup tree, a mount point, knobs of a fake /sys, processes),
// which never touches a live owner's objects or what is not its own.
#include "workloads/sys/journal.h"
#include "workloads/sys/sweep.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "results/model/exit_codes.h"
#include "test_support.h"
#include "workloads/sys/knobs.h"

using namespace nightjar;
using nightjar::test::read_file;
using nightjar::test::TempDir;
namespace fs = std::filesystem;

namespace {

/// A pid that is no process any more: a child that exited and was reaped.
pid_t dead_pid() {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

/// Writes a journal file for `owner` with the given records (none done).
std::string write_journal(const std::string& dir, const ProcessIdentity& owner,
                          const std::vector<std::pair<JournalKind, std::vector<std::string>>>& recs,
                          const std::vector<std::uint64_t>& done = {}) {
  fs::create_directories(dir);
  std::string text = "nightjar-journal\t1\t" + std::to_string(owner.pid) + "\t" +
                     std::to_string(owner.start_ticks) + "\t" + owner.boot_id +
                     "\tnightjar run jobs/test.yaml\n";
  std::uint64_t id = 0;
  for (const auto& [kind, fields] : recs) text += journal_record_line(++id, kind, fields);
  for (auto d : done) text += journal_done_line(d);
  const std::string path =
      dir + "/" + std::to_string(owner.pid) + "-" + std::to_string(owner.start_ticks) + ".journal";
  std::ofstream(path) << text;
  return path;
}

ProcessIdentity ended_owner() {
  return ProcessIdentity{dead_pid(), 12345, current_boot_id()};
}

bool exists(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

}  // namespace

// ---- format ---------------------------------------------------------------------
TEST(JournalFormat, FieldsEscapeTabsNewlinesAndBackslashes) {
  const std::string nasty = "a\tb\nc\\d e";
  EXPECT_EQ(escape_journal_field(nasty), "a\\tb\\nc\\\\d e");
  EXPECT_EQ(unescape_journal_field(escape_journal_field(nasty)), nasty);
  EXPECT_EQ(journal_record_line(3, JournalKind::knob, {"/sys/x", "4096 65536", "never"}),
            "+\t3\tknob\t/sys/x\t4096 65536\tnever\n");
  EXPECT_EQ(journal_done_line(3), "-\t3\n");
}

TEST(JournalFormat, ParseAppliesDoneAndIgnoresATornLastLine) {
  const std::string text =
      "nightjar-journal\t1\t77\t900\tboot-1\tnightjar run a\\tb.yaml\n"
      "+\t1\tcgroup\t/sys/fs/cgroup/memory/nightjar-x\t/sys/fs/cgroup/memory\t0\n"
      "+\t2\tknob\t/sys/k\tmadvise\tnever\t/run/lock/l\t/sys/k\n"
      "garbage line\n"
      "+\t3\tfrobnicator\tx\n"
      "-\t1\n"
      "+\t4\tswap\t/dev/zram1";  // torn: no newline
  auto j = parse_journal(text, "/run/nightjar/77-900.journal");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->owner.pid, 77);
  EXPECT_EQ(j->owner.start_ticks, 900u);
  EXPECT_EQ(j->owner.boot_id, "boot-1");
  EXPECT_EQ(j->command, "nightjar run a\tb.yaml");
  ASSERT_EQ(j->entries.size(), 2u);
  EXPECT_TRUE(j->entries[0].done);
  EXPECT_FALSE(j->entries[1].done);
  ASSERT_EQ(j->open().size(), 1u);
  EXPECT_EQ(j->open()[0]->kind, JournalKind::knob);
  EXPECT_EQ(j->open()[0]->field(1), "madvise");
  EXPECT_EQ(j->open()[0]->field(9), "");
  EXPECT_EQ(j->open()[0]->describe(), "knob /sys/k ('never', was 'madvise')");
  EXPECT_FALSE(parse_journal("not a journal\n", "x"));
  EXPECT_FALSE(parse_journal("nightjar-journal\t2\t1\t2\tb\tc\n", "x"));
}

TEST(JournalFormat, KindsRoundTrip) {
  for (auto k :
       {JournalKind::process, JournalKind::process_group, JournalKind::cgroup, JournalKind::zram,
        JournalKind::swap, JournalKind::mount_point, JournalKind::mount, JournalKind::knob})
    EXPECT_EQ(journal_kind_from_string(to_string(k)), k);
  EXPECT_EQ(journal_kind_from_string("nope"), std::nullopt);
}

// ---- identity -------------------------------------------------------------------
TEST(JournalIdentity, StartTicksComeFromField22AfterTheCommandName) {
  EXPECT_EQ(stat_field("12 (a) b) c) S 1 12 12", 3), "S");
  EXPECT_EQ(stat_field("12 (a) b) c) S 1 12 12", 5), "12");
  EXPECT_EQ(stat_field("12 (x) S", 22), std::nullopt);
  const ProcessIdentity me = own_identity();
  EXPECT_EQ(me.pid, getpid());
  EXPECT_GT(me.start_ticks, 0u);
  EXPECT_EQ(me.boot_id.size(), 36u) << me.boot_id;
  EXPECT_TRUE(identity_alive(me));
  ProcessIdentity reused = me;
  reused.start_ticks += 1;  // the same pid, another process
  EXPECT_FALSE(identity_alive(reused));
  ProcessIdentity other_boot = me;
  other_boot.boot_id = "00000000-0000-0000-0000-000000000000";
  EXPECT_FALSE(identity_alive(other_boot));
  EXPECT_FALSE(identity_alive(ProcessIdentity{dead_pid(), 1, me.boot_id}));
  EXPECT_EQ(process_start_ticks(dead_pid()), std::nullopt);
}

TEST(JournalDirectory, EnvironmentOverridesTheDefault) {
  ::setenv("NIGHTJAR_JOURNAL_DIR", "/tmp/somewhere", 1);
  EXPECT_EQ(journal_directory(), "/tmp/somewhere");
  ::unsetenv("NIGHTJAR_JOURNAL_DIR");
  const std::string d = journal_directory();
  EXPECT_TRUE(d == "/run/nightjar" || d.find("nightjar") != std::string::npos) << d;
}

// ---- the owner's file -----------------------------------------------------------
TEST(JournalFile, LivesLockedFromTheFirstRecordToTheLastDone) {
  TempDir t;
  const std::string dir = t.path() + "/journal";
  Journal j(dir);
  EXPECT_EQ(j.path(), "");
  const std::uint64_t a = j.record(JournalKind::mount_point, {"/run/nightjar-1-x"});
  const std::uint64_t b = j.record(JournalKind::cgroup, {"/sys/fs/cgroup/nightjar-y", "/", "0"});
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  const ProcessIdentity me = own_identity();
  const std::string path =
      dir + "/" + std::to_string(me.pid) + "-" + std::to_string(me.start_ticks) + ".journal";
  EXPECT_EQ(j.path(), path);
  EXPECT_EQ(j.open_count(), 2u);
  // The owner holds the lock: another open file description cannot take it.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_NE(::flock(fd, LOCK_EX | LOCK_NB), 0);
  ::close(fd);
  j.done(a);
  auto parsed = parse_journal(read_file(path), path);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->owner, me);
  ASSERT_EQ(parsed->open().size(), 1u);
  EXPECT_EQ(parsed->open()[0]->id, b);
  j.done(a);  // twice: nothing
  j.done(0);
  j.done(b);
  EXPECT_FALSE(exists(path)) << "a journal with nothing open is removed";
  EXPECT_EQ(j.path(), "");
  // The next record makes a new file.
  j.done(j.record(JournalKind::swap, {"/dev/zram9", "u"}));
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST(JournalFile, AFileWithOpenRecordsStaysWhenTheOwnerGoes) {
  TempDir t;
  std::string path;
  {
    Journal j(t.path());
    j.record(JournalKind::mount_point, {"/nonexistent/nightjar-z"});
    path = j.path();
  }
  ASSERT_TRUE(exists(path));
  // Its lock went with it; its owner (this process) still runs, so a sweep
  // still leaves it alone.
  SweepOptions o;
  o.dir = t.path();
  SweepReport r = sweep_journals(o);
  ASSERT_EQ(r.owners.size(), 1u);
  EXPECT_FALSE(r.owners[0].ended);
  EXPECT_TRUE(exists(path));
}

TEST(JournalFile, UnwritableDirectoryIsAnEnvironmentError) {
  TempDir t;
  std::ofstream(t.path() + "/file") << "x";
  Journal j(t.path() + "/file/journal");
  try {
    j.record(JournalKind::mount_point, {"/x"});
    FAIL() << "expected EnvironmentError";
  } catch (const EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("NIGHTJAR_JOURNAL_DIR"), std::string::npos) << e.what();
  }
  EXPECT_EQ(j.record_or_warn(JournalKind::mount_point, {"/x"}), 0u);
}

// ---- the sweep --------------------------------------------------------------------
TEST(Sweep, UndoesAnEndedOwnersObjectsLastFirstAndRemovesItsFile) {
  TempDir t;
  const std::string root = t.path() + "/cgroup";  // a simulated cgroupfs
  const std::string tree = root + "/nightjar-run1-7";
  fs::create_directories(tree + "/l1/c0");
  std::ofstream(tree + "/l1/memory.low") << "134217728\n";
  std::ofstream(tree + "/l1/c0/cgroup.procs") << "";
  const std::string mp = t.path() + "/nightjar-7-mnt";
  fs::create_directory(mp);
  const std::string sys = t.path() + "/fake";
  fs::create_directories(sys + "/sys/kernel/mm/transparent_hugepage");
  const std::string thp = sys + "/sys/kernel/mm/transparent_hugepage/enabled";
  const std::string defrag = sys + "/sys/kernel/mm/transparent_hugepage/defrag";
  std::ofstream(thp) << "always madvise [never]\n";
  std::ofstream(defrag) << "[always] defer madvise never\n";  // changed by someone since
  const std::string lock = knob_lock_path(sys);
  const pid_t sleeper = test::fork_sleeper();
  ASSERT_GT(sleeper, 0);
  const std::uint64_t sleeper_start = *process_start_ticks(sleeper);
  const ProcessIdentity me = own_identity();

  const std::string dir = t.path() + "/journal";
  const std::string path = write_journal(
      dir, ended_owner(),
      {{JournalKind::knob,
        {thp, "madvise", "never", lock, "/sys/kernel/mm/transparent_hugepage/enabled"}},
       {JournalKind::knob,
        {defrag, "madvise", "never", lock, "/sys/kernel/mm/transparent_hugepage/defrag"}},
       {JournalKind::cgroup, {tree, root, "1"}},
       {JournalKind::cgroup, {tree + "/l1", root, "1"}},
       {JournalKind::cgroup, {tree + "/l1/c0", root, "1"}},
       {JournalKind::mount_point, {mp}},
       {JournalKind::process,
        {std::to_string(sleeper), std::to_string(sleeper_start), "pft worker 0"}},
       // The same pid as this test, another start time: a reused pid, never killed.
       {JournalKind::process,
        {std::to_string(me.pid), std::to_string(me.start_ticks + 1), "old"}}});

  SweepOptions list;
  list.dir = dir;
  list.list_only = true;
  SweepReport listed = sweep_journals(list);
  EXPECT_EQ(listed.leftover_count(), 8u);
  EXPECT_TRUE(exists(tree + "/l1/c0")) << "--list changes nothing";

  SweepOptions o;
  o.dir = dir;
  SweepReport r = sweep_journals(o);
  const std::string text = joined(r.lines());
  ASSERT_EQ(r.owners.size(), 1u) << text;
  EXPECT_TRUE(r.owners[0].ended);
  EXPECT_EQ(r.undone_count(), 6u) << text;
  EXPECT_EQ(r.leftover_count(), 0u) << text;
  EXPECT_FALSE(exists(tree)) << text;
  EXPECT_FALSE(exists(mp)) << text;
  EXPECT_EQ(read_file(thp), "madvise\n");
  EXPECT_EQ(read_file(defrag), "[always] defer madvise never\n") << "not the value nightjar wrote";
  EXPECT_NE(text.find("killed process " + std::to_string(sleeper) + " (pft worker 0)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("left alone: knob /sys/kernel/mm/transparent_hugepage/defrag holds "
                      "'always', not the 'never' nightjar wrote"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("restored knob /sys/kernel/mm/transparent_hugepage/enabled to 'madvise'"),
            std::string::npos)
      << text;
  // Processes first, then the rest last recorded first: the leaf before its parents.
  const auto& undone = r.owners[0].undone;
  ASSERT_GE(undone.size(), 4u);
  EXPECT_NE(undone[0].find("killed process"), std::string::npos) << text;
  EXPECT_NE(undone[1].find("removed directory " + mp), std::string::npos) << text;
  EXPECT_NE(undone[2].find("removed cgroup " + tree + "/l1/c0"), std::string::npos) << text;
  EXPECT_FALSE(exists(path)) << "every object done: the journal goes";
  int status = 0;
  EXPECT_EQ(waitpid(sleeper, &status, 0), sleeper);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(Sweep, WhatCannotBeUndoneStaysRecordedForTheNextSweep) {
  TempDir t;
  const std::string mp = t.path() + "/nightjar-busy";
  fs::create_directory(mp);
  std::ofstream(mp + "/someone-elses-file") << "x";
  const std::string dir = t.path() + "/journal";
  const std::string path = write_journal(dir, ended_owner(), {{JournalKind::mount_point, {mp}}});
  SweepOptions o;
  o.dir = dir;
  SweepReport r = sweep_journals(o);
  EXPECT_EQ(r.leftover_count(), 1u);
  EXPECT_NE(joined(r.lines()).find("could not undo: cannot remove " + mp), std::string::npos)
      << joined(r.lines());
  EXPECT_TRUE(exists(path));
  EXPECT_TRUE(exists(mp + "/someone-elses-file"));
  fs::remove(mp + "/someone-elses-file");
  r = sweep_journals(o);
  EXPECT_EQ(r.undone_count(), 1u);
  EXPECT_FALSE(exists(path));
}

TEST(Sweep, ALiveOwnerIsNeverTouchedEvenUnderAnotherPid) {
  TempDir t;
  const std::string tree = t.path() + "/cg/nightjar-live";
  fs::create_directories(tree);
  const std::string dir = t.path() + "/journal";
  // The file names a pid that is gone (as seen from another pid namespace),
  // but a live process holds its lock.
  const std::string path =
      write_journal(dir, ended_owner(), {{JournalKind::cgroup, {tree, t.path() + "/cg", "1"}}});
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t holder = fork();
  if (holder == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0 || ::flock(fd, LOCK_EX) != 0) _exit(1);
    if (write(ready[1], "x", 1) != 1) _exit(1);
    for (;;) pause();
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  SweepOptions o;
  o.dir = dir;
  SweepReport r = sweep_journals(o);
  EXPECT_EQ(r.undone_count(), 0u);
  EXPECT_EQ(r.live_count(), 1u);
  EXPECT_TRUE(r.lines().empty()) << joined(r.lines());
  EXPECT_TRUE(exists(tree));
  EXPECT_TRUE(exists(path));
  kill(holder, SIGKILL);
  int status = 0;
  waitpid(holder, &status, 0);
  r = sweep_journals(o);
  EXPECT_EQ(r.undone_count(), 1u) << joined(r.lines());
  EXPECT_FALSE(exists(tree));
  close(ready[0]);
  close(ready[1]);
}

TEST(Sweep, OwnJournalAndARunningOwnerAreLiveAndStaleTemporariesGo) {
  TempDir t;
  const std::string dir = t.path() + "/journal";
  Journal mine(dir);
  const std::string kept = t.path() + "/nightjar-mine";
  fs::create_directory(kept);
  mine.record(JournalKind::mount_point, {kept});
  // A temporary journal of an owner that ended before renaming it.
  const ProcessIdentity gone = ended_owner();
  const std::string tmp =
      dir + "/." + std::to_string(gone.pid) + "-" + std::to_string(gone.start_ticks) + ".tmp";
  std::ofstream(tmp) << "";
  SweepOptions o;
  o.dir = dir;
  SweepReport r = sweep_journals(o);
  EXPECT_EQ(r.live_count(), 1u);
  EXPECT_EQ(r.undone_count(), 0u);
  EXPECT_TRUE(exists(kept));
  EXPECT_FALSE(exists(tmp));
  fs::remove(kept);
}

TEST(Sweep, KnobSetRestoresAKilledRunsKnobBeforeSavingThePreviousValue) {
  TempDir t;
  const std::string sys = t.path() + "/fake";
  fs::create_directories(sys + "/sys/kernel/mm/transparent_hugepage");
  fs::create_directories(sys + "/proc");
  const std::string thp = sys + "/sys/kernel/mm/transparent_hugepage/enabled";
  std::ofstream(thp) << "never\n";  // what a killed variant left
  const std::string dir = t.path() + "/journal";
  write_journal(dir, ended_owner(),
                {{JournalKind::knob, {thp, "madvise", "never", knob_lock_path(sys), ""}}});
  ::setenv("NIGHTJAR_JOURNAL_DIR", dir.c_str(), 1);
  {
    KnobSet knobs(sys);
    ASSERT_EQ(knobs.apply({{"/sys/kernel/mm/transparent_hugepage/enabled", "always", 1}}),
              std::nullopt);
    EXPECT_EQ(read_file(thp), "always\n");
  }
  ::unsetenv("NIGHTJAR_JOURNAL_DIR");
  EXPECT_EQ(read_file(thp), "madvise\n") << "restored to the system's value, not the killed run's";
  EXPECT_TRUE(fs::is_empty(dir));
}

// A nightjar killed between reading hot_add (which creates the device) and
// recording the number left a pending zram record listing the devices that
// existed before; the sweep removes the new, unconfigured device and
// nothing else. While another nightjar holds the zram lock (it is inside
// that window itself), the record is kept for a later sweep.
TEST(Sweep, APendingHotAddIsSweptByTheListOfDevicesBefore) {
  TempDir t;
  const std::string root = t.path() + "/fake";
  auto device = [&](int id, const std::string& disksize) {
    const std::string d = root + "/sys/block/zram" + std::to_string(id);
    fs::create_directories(d + "/holders");
    std::ofstream(d + "/disksize") << disksize << "\n";
  };
  fs::create_directories(root + "/sys/class/zram-control");
  fs::create_directories(root + "/proc");
  std::ofstream(root + "/proc/swaps") << "Filename\tType\tSize\tUsed\tPriority\n";
  std::ofstream(root + "/sys/class/zram-control/hot_remove") << "";
  device(0, "0");        // existed before the killed nightjar read hot_add
  device(1, "0");        // what its read created: new, unconfigured
  device(2, "1048576");  // new, but configured by something else: not the orphan
  const std::string dir = t.path() + "/journal";
  write_journal(dir, ended_owner(),
                {{JournalKind::zram, {root, "", "1", "67108864", "", "before:0"}}});

  {  // another nightjar is between its read of hot_add and its record
    const int fd = ::open(system_lock_path(root, "zram").c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::flock(fd, LOCK_EX), 0);
    SweepOptions o;
    o.dir = dir;
    const std::string lines = joined(sweep_journals(o).lines());
    ::close(fd);
    EXPECT_NE(lines.find("could not undo: a zram device being added now"), std::string::npos)
        << lines;
    EXPECT_EQ(read_file(root + "/sys/class/zram-control/hot_remove"), "");
  }

  SweepOptions o;
  o.dir = dir;
  const std::string lines = joined(sweep_journals(o).lines());
  EXPECT_NE(lines.find("hot-removed zram1 (hot-added by a nightjar killed before it recorded"),
            std::string::npos)
      << lines;
  EXPECT_EQ(read_file(root + "/sys/class/zram-control/hot_remove"), "1");
  EXPECT_EQ(lines.find("zram0"), std::string::npos) << lines;
  EXPECT_EQ(lines.find("zram2"), std::string::npos) << lines;
  EXPECT_TRUE(fs::is_empty(dir)) << "the record is done and the file removed";
}
