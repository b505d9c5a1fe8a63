// The sweep: undoes what ended nightjar processes left behind, as their
// journals record it (workloads/sys/journal.h). It runs at the start of every
// `nightjar run`, as `nightjar cleanup`, and, for knob records only, inside
// KnobSet when it takes the knob lock (workloads/sys/knobs.h); `nightjar env`
// lists the same objects without touching them (list_only). docs/cleanup.md
// explains it for users.
//
// Whose objects: a journal file is swept only when its owner ended:
//  1. the file's flock(2) can be taken without waiting (a live owner holds
//     it for as long as the file exists, so this also holds across pid reuse
//     and pid namespaces), and
//  2. the owner it names is not running: its pid does not have the recorded
//     start time (/proc/PID/stat field 22), or the boot id differs.
// Anything else is a live owner's and is never touched; neither is anything
// no journal records. Each undo step checks the object is still the one
// recorded (a start time, a swap UUID, a mount source, a disksize, a knob's
// written value) and leaves it alone, saying so, when it is not.
//
// Order within one owner: its processes first (SIGKILLed and waited for),
// then every other object in the reverse order of recording: a cgroup tree
// leaf first with leftover tasks moved out, the tmpfs unmounted before its
// mount point is removed, swapoff before the zram device is reset and
// hot-removed, knobs restored last-changed first. Every undone (or vanished,
// or declined) object is marked done in the owner's file as it goes, so an
// interrupted sweep resumes; a file with nothing left open is removed.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "workloads/sys/journal.h"

namespace nightjar {

/// What to sweep.
struct SweepOptions {
  std::string dir = journal_directory();  ///< the journals' directory
  bool knobs_only = false;                ///< only knob records (KnobSet, under the knob lock)
  /// A knob lock file the caller holds: knob records of this lock are
  /// restored without taking it; with knobs_only, records of other locks
  /// are not touched.
  std::string knob_lock_held;
  bool list_only = false;  ///< change nothing: only say what is recorded (`nightjar env`)
};

/// What the sweep found and did for one owner.
struct OwnerSweep {
  std::string path;                   ///< its journal file
  ProcessIdentity owner;              ///< as the file names it
  std::string command;                ///< its command line
  bool ended = false;                 ///< false: a live nightjar (nothing of it was touched)
  std::vector<std::string> undone;    ///< removed or restored ("swapoff /dev/zram1")
  std::vector<std::string> declined;  ///< not nightjar's any more: left alone, with why
  std::vector<std::string> left;      ///< could not be undone now: still recorded, with why
  std::vector<std::string> open;      ///< list_only or live: the objects its journal holds
};

/// The outcome of sweep_journals().
struct SweepReport {
  std::string dir;                  ///< the journals' directory
  std::vector<OwnerSweep> owners;   ///< every owner with something recorded, by file name
  std::vector<std::string> errors;  ///< journals that could not be read, with why

  /// Objects removed or restored.
  std::size_t undone_count() const;
  /// Objects of ended owners still recorded (left, or listed by list_only).
  std::size_t leftover_count() const;
  /// Objects of live nightjar processes.
  std::size_t live_count() const;
  /// One line per fact, for stderr: "cleanup: nightjar pid 12 (nightjar run
  /// x.yaml) ended without cleaning up: swapoff /dev/zram1", "cleanup: left
  /// alone: ...", "cleanup: could not undo: ...". Live owners are not
  /// listed; nothing found gives no lines.
  std::vector<std::string> lines() const;
};

/// Sweeps (or with list_only, lists) the journals of `options.dir` as the
/// header describes. Never throws for what it finds; a journal it cannot
/// open or read is reported in `errors`.
SweepReport sweep_journals(const SweepOptions& options);

}  // namespace nightjar
