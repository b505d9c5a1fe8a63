// `nightjar lava jobs`: see harness/lava/jobs.h. The definitions follow the
// job structure that ran on this machine's lava-dispatcher 2023.01
// (docs/lava.md) and LAVA's own conventions: job_name,
// device_type, priority, visibility, tags, metadata, job/action/connection
// timeouts, and per-action timeouts.
#include "harness/lava/jobs.h"

#include <fmt/format.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/job/iteration_time.h"
#include "harness/job/job.h"
#include "harness/run/runner.h"
#include "harness/vm/initramfs.h"
#include "results/io/input_file.h"
#include "results/model/exit_codes.h"
#include "results/model/text.h"
#include "workloads/sys/probe.h"
#include "workloads/sys/process.h"

namespace nightjar {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr const char* kGuestDb = "/tmp/nightjar-lava.db";
constexpr const char* kGuestCases = "/tmp/nightjar-lava.cases";
constexpr int kDeployMinutes = 5;
constexpr int kBootMinutes = 5;
// Seconds per iteration assumed for a job without a duration parameter (pft
// under TCG takes a few seconds per iteration; a real board less).
constexpr double kGuessSecondsPerIteration = 30;

// A kernel as the jobs name it.
struct LavaKernel {
  std::string source;  // --kernel as given
  std::string url;     // what the job deploys
  std::string path;    // local file ("" for an http(s) URL)
  KernelImage image;   // inspected (path) or only modules (URL)
  std::string name;    // release, else the URL's file name
};

bool is_url(const std::string& s) {
  return s.find("://") != std::string::npos;
}

std::string file_word(const std::string& text) {
  std::string out;
  for (char c : text)
    out +=
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '_';
  return out;
}

LavaKernel resolve_kernel(const std::string& source, const LavaJobsOptions& o) {
  LavaKernel k;
  k.source = source;
  // A file:// URL of a file this machine has is inspected as a path; one
  // it does not have is the worker's business (LAVA downloads it).
  const bool local_file = source.rfind("file://", 0) == 0 && fs::is_regular_file(source.substr(7));
  if (is_url(source) && !local_file) {
    if (source.rfind("http://", 0) != 0 && source.rfind("https://", 0) != 0 &&
        source.rfind("file://", 0) != 0)
      throw UsageError(fmt::format(
          "--kernel {}: not a URL LAVA downloads; give an http://, https:// or file:// URL, or "
          "the path of a kernel image on this machine",
          source));
    if (source.rfind("file://", 0) == 0)
      std::cerr << fmt::format(
          "nightjar: lava: --kernel {}: no such file on this machine; the LAVA worker must "
          "have it\n",
          source);
    k.url = source;
    std::string tail = source.substr(source.find("://") + 3);
    tail = tail.substr(0, tail.find_first_of("?#"));
    k.name = file_word(fs::path(tail).filename().string());
    if (k.name.empty()) k.name = "kernel";
    // A URL's release is unknown here: only --modules (the
    // lib/modules/<release> directory itself) can give its modules.
    if (!o.modules.empty()) {
      if (!fs::exists(fs::path(o.modules) / "modules.dep") &&
          !fs::exists(fs::path(o.modules) / "modules.builtin"))
        throw UsageError(fmt::format(
            "--modules {}: no modules.dep or modules.builtin in it; with a kernel URL give the "
            "lib/modules/<release> directory of that kernel itself",
            o.modules));
      k.image.modules_dir = o.modules;
    }
    k.image.path = source;
    return k;
  }
  k.path = source.rfind("file://", 0) == 0 ? source.substr(7) : source;
  k.image = inspect_kernel_image(k.path, o.modules);
  k.name = file_word(k.image.release);
  k.url = "file://" + fs::absolute(k.path).lexically_normal().string();
  return k;
}

// Single-quoted for sh unless the word needs no quoting.
std::string sh_word(const std::string& w) {
  if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-./=:,+%@") == std::string::npos)
    return w;
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The options of `nightjar run` for a plan (host side) and for the guest.
RunOptions run_options(const LavaJobsOptions& o, const std::string& variant) {
  RunOptions r;
  r.job_paths = o.job_paths;
  r.variant = variant;
  r.runs = o.runs;
  r.build = o.build;
  r.iterations = o.iterations;
  r.warmup = o.warmup;
  for (const auto& s : o.sets) r.overrides.push_back(parse_set(s));
  r.context = o.context;
  return r;
}

// The guest's `nightjar run` command line.
std::string guest_run_command(const LavaJobsOptions& o, const std::string& variant) {
  std::string cmd = "nightjar run";
  for (std::size_t i = 0; i < o.job_paths.size(); ++i)
    cmd += " " + sh_word(guest_job_path(i, o.job_paths[i]));
  cmd += std::string(" --db ") + kGuestDb;
  if (!variant.empty()) cmd += " --variant " + sh_word(variant);
  for (const auto& s : o.sets) cmd += " --set " + sh_word(s);
  if (o.iterations) cmd += fmt::format(" --iterations {}", *o.iterations);
  if (o.warmup) cmd += fmt::format(" --warmup {}", *o.warmup);
  if (o.runs > 1) cmd += fmt::format(" --runs {}", o.runs);
  if (!o.build.empty()) cmd += " --build " + sh_word(o.build);
  for (const auto& [k, v] : o.context) cmd += " --context " + sh_word(k + "=" + v);
  return cmd;
}

// Seconds the guest's `nightjar run` may take: every run's iterations times
// its cell's declared iteration time (harness/job/iteration_time.h; else a
// guess per iteration).
double estimated_seconds(const std::vector<PlannedJob>& plan, int runs) {
  double total = 0;
  for (const auto& job : plan) {
    for (const auto& cell : job.cells) {
      double per = declared_iteration_time(*job.workload, cell).seconds;
      if (per <= 0) per = kGuessSecondsPerIteration;
      total += per * (job.iterations + job.warmup) * static_cast<double>(job.variants.size());
    }
  }
  return total * std::max(1, runs);
}

YAML::Node minutes(int m) {
  YAML::Node n;
  n["minutes"] = m;
  return n;
}

// The inline test definition: nightjar run, the report, the test cases.
YAML::Node test_action(const LavaJobsOptions& o, const std::string& variant, int test_minutes,
                       bool qemu) {
  YAML::Node steps;
  steps.push_back("export PATH=/nightjar:$PATH");
  // Facts the guest knows and compare/report read, as `nightjar run
  // --kernel` records them (docs/qemu.md): kernel.preempt_rt (report
  // --group kernel), and in qemu vm.accelerator (compare's "TCG: measures
  // emulation" warning): KVM announces itself to the kernel, TCG does not.
  steps.push_back(
      "if grep -qs '^CONFIG_PREEMPT_RT=y' /boot/config-$(uname -r) || uname -v | grep -q "
      "PREEMPT_RT; then NJ_RT=yes; else NJ_RT=no; fi");
  std::string facts = " --context kernel.preempt_rt=$NJ_RT";
  if (qemu) {
    steps.push_back(
        "if dmesg | grep -q 'Hypervisor detected: KVM'; then NJ_ACCEL=kvm; else NJ_ACCEL=tcg; fi");
    facts += " --context vm.accelerator=$NJ_ACCEL";
  }
  // stderr through a pipe: progress as lines, not a terminal bar; the exit
  // status is printed, not fatal (run.sh runs with set -e, and the report
  // must still run: failed cells are stored as failed).
  steps.push_back("{ " + guest_run_command(o, variant) + facts +
                  " || echo \"nightjar-lava: nightjar run exited $?\"; } 2>&1 | cat");
  // Kernel messages must not split the blocks' lines on the console.
  steps.push_back("dmesg -n 1");
  steps.push_back(std::string("nightjar lava report --db ") + kGuestDb + " --cases " + kGuestCases);
  steps.push_back("dmesg -n 7");
  steps.push_back(
      std::string("while read -r name result value units; do if [ -n \"$value\" ]; then "
                  "lava-test-case \"$name\" --result \"$result\" --measurement \"$value\" "
                  "--units \"$units\"; else lava-test-case \"$name\" --result \"$result\"; fi; "
                  "done < ") +
      kGuestCases);
  YAML::Node metadata;
  metadata["format"] = "Lava-Test Test Definition 1.0";
  metadata["name"] = "nightjar";
  metadata["description"] = "nightjar run of " + join(o.job_paths, " ") + " (docs/lava.md)";
  YAML::Node repo;
  repo["metadata"] = metadata;
  repo["run"]["steps"] = steps;
  YAML::Node def;
  def["from"] = "inline";
  def["name"] = "nightjar";
  def["path"] = "inline/nightjar.yaml";
  def["repository"] = repo;
  YAML::Node test;
  test["timeout"] = minutes(test_minutes);
  test["definitions"].push_back(def);
  YAML::Node action;
  action["test"] = test;
  return action;
}

// The built-in deploy and boot of device type qemu.
std::vector<YAML::Node> qemu_actions(const std::string& kernel_url,
                                     const std::string& ramdisk_url) {
  YAML::Node kernel;
  kernel["image_arg"] = "-kernel {kernel} -no-reboot -append \"" + lava_kernel_cmdline() + "\"";
  kernel["url"] = kernel_url;
  YAML::Node ramdisk;
  ramdisk["image_arg"] = "-initrd {ramdisk}";
  ramdisk["url"] = ramdisk_url;
  ramdisk["format"] = "cpio.newc";
  ramdisk["overlays"]["lava"] = true;
  YAML::Node deploy;
  deploy["to"] = "tmpfs";
  deploy["timeout"] = minutes(kDeployMinutes);
  deploy["images"]["kernel"] = kernel;
  deploy["images"]["ramdisk"] = ramdisk;
  YAML::Node boot;
  boot["method"] = "qemu";
  boot["media"] = "tmpfs";
  boot["timeout"] = minutes(kBootMinutes);
  boot["prompts"].push_back(kLavaPrompt);
  YAML::Node a, b;
  a["deploy"] = deploy;
  b["boot"] = boot;
  return {a, b};
}

// Replaces the placeholders in every string scalar of `n`.
YAML::Node substitute(const YAML::Node& n, const std::map<std::string, std::string>& values) {
  if (n.IsScalar()) {
    std::string s = n.Scalar();
    bool changed = false;
    for (const auto& [from, to] : values)
      for (std::size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) {
        s.replace(p, from.size(), to);
        changed = true;
      }
    return changed ? YAML::Node(s) : YAML::Clone(n);
  }
  if (n.IsSequence()) {
    YAML::Node out(YAML::NodeType::Sequence);
    for (const auto& item : n) out.push_back(substitute(item, values));
    return out;
  }
  if (n.IsMap()) {
    YAML::Node out(YAML::NodeType::Map);
    for (const auto& kv : n) out[kv.first.Scalar()] = substitute(kv.second, values);
    return out;
  }
  return YAML::Clone(n);
}

// Whether any string scalar of `n` holds `quiet` as a word.
bool has_quiet(const YAML::Node& n) {
  if (n.IsScalar()) {
    for (const auto& w : split_blanks(n.Scalar()))
      if (w == "quiet" || w == "\"quiet" || w == "quiet\"") return true;
    return false;
  }
  if (n.IsSequence() || n.IsMap())
    for (const auto& item : n)
      if (n.IsMap() ? has_quiet(item.second) : has_quiet(item)) return true;
  return false;
}

// A device type's template: its deploy and boot actions (and optional
// context and timeouts), read and checked once.
struct DeviceTemplate {
  std::string path;
  YAML::Node doc;
};

DeviceTemplate load_template(const std::string& type, const std::string& path) {
  static constexpr InputKind kTemplate{
      .noun = "LAVA template",
      .expect =
          "a template is a YAML file with the deploy and boot actions of a device type, "
          "such as docs/lava-x86-ipxe.yaml",
      .max_bytes = 1 << 20,
      .cap = "1 MiB",
      .too_large_fix = "a template is a few lines of YAML: check that this is the file you meant",
  };
  const std::string text = InputFile(path, kTemplate).read_all();
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw UsageError(
        fmt::format("{}:{}: not YAML ({}): {}; give the deploy and boot actions of "
                    "device type {} (docs/lava.md \"Real boards\")",
                    path, e.mark.line + 1, e.msg, path, type));
  }
  if (!doc.IsMap() || !doc["actions"] || !doc["actions"].IsSequence())
    throw UsageError(fmt::format(
        "{}: the template is not a mapping with an `actions:` list; write `actions:` with a "
        "`- deploy:` and a `- boot:` entry (docs/lava.md \"Real boards\")",
        path));
  bool deploy = false, boot = false;
  for (const auto& a : doc["actions"]) {
    if (!a.IsMap()) continue;
    deploy = deploy || a["deploy"];
    boot = boot || a["boot"];
    if (a["test"])
      throw UsageError(
          fmt::format("{}: `actions:` has a test action; leave it out: nightjar adds "
                      "its own test definition",
                      path));
  }
  if (!deploy || !boot)
    throw UsageError(
        fmt::format("{}: `actions:` needs a `- deploy:` and a `- boot:` entry; it "
                    "has {}",
                    path, deploy ? "no boot" : "no deploy"));
  if (YAML::Dump(doc).find("@RAMDISK_URL@") == std::string::npos)
    throw UsageError(fmt::format(
        "{}: the template never names @RAMDISK_URL@; deploy nightjar's ramdisk with `url: "
        "'@RAMDISK_URL@'` (and the kernel with `url: '@KERNEL_URL@'`)",
        path));
  if (has_quiet(doc))
    throw UsageError(fmt::format(
        "{}: the template puts `quiet` on the kernel command line; remove it: LAVA waits for the "
        "kernel's \"Linux version\" banner, which quiet hides",
        path));
  return {path, doc};
}

std::map<std::string, std::string> placeholders(const std::string& kernel_url,
                                                const std::string& ramdisk_url) {
  return {{"@KERNEL_URL@", kernel_url},
          {"@RAMDISK_URL@", ramdisk_url},
          {"@KERNEL_ARGS@", lava_kernel_cmdline()},
          {"@PROMPT@", kLavaPrompt}};
}

std::vector<YAML::Node> template_actions(const DeviceTemplate& t, const std::string& kernel_url,
                                         const std::string& ramdisk_url) {
  std::vector<YAML::Node> out;
  for (const auto& a : t.doc["actions"])
    out.push_back(substitute(a, placeholders(kernel_url, ramdisk_url)));
  return out;
}

void check_priority(const std::string& p) {
  if (p == "high" || p == "medium" || p == "low") return;
  if (!p.empty() && p.find_first_not_of("0123456789") == std::string::npos && p.size() <= 3 &&
      std::stoi(p) <= 100)
    return;
  throw UsageError("--priority " + echo_input(p) +
                   ": LAVA's priorities are high, medium, low or a number from 0 to 100");
}

std::string job_name(const LavaJobsOptions& o, const std::vector<PlannedJob>& plan,
                     const LavaKernel& k, const std::string& type, const std::string& variant) {
  std::vector<std::string> names;
  for (const auto& j : plan) names.push_back(j.job.name);
  std::string name = fmt::format("nightjar {} on {} ({}{})", join(names, "+"), k.name, type,
                                 variant.empty() ? "" : ", variant " + variant);
  if (!o.build.empty()) name += " build " + o.build;
  return name.size() > 200 ? name.substr(0, 200) : name;  // LAVA's job_name limit
}

json plan_json(const LavaJobEntry& e) {
  json plan = json::array();
  for (const auto& r : e.plan) {
    json params = json::object();
    for (const auto& [name, v] : r.params) params[name] = {{"text", v.text}, {"number", v.number}};
    plan.push_back({{"job", r.job},
                    {"job_path", r.job_path},
                    {"workload", r.workload},
                    {"variant", r.variant},
                    {"build", r.build},
                    {"params", params},
                    {"iterations", r.iterations},
                    {"warmup", r.warmup}});
  }
  return plan;
}

// The LAVA guest's /init: the common setup, then a shell for LAVA.
std::string lava_guest_init(const std::string& cgroup2_options) {
  GuestInit init;
  init.hostname = "nightjar-lava";
  init.cgroup2_options = cgroup2_options;
  init.tail_source = "harness/lava/jobs.cpp (a shell for LAVA's test shell)";
  init.tail = std::string(R"SH(export PATH=/nightjar:$PATH
export PS1=')SH") +
              kLavaPrompt + R"SH('
echo "nightjar-guest: shell for LAVA's test shell (prompt $PS1)"
exec sh -i
)SH";
  return guest_init_script(init);
}

}  // namespace

std::string lava_kernel_cmdline() {
  return "console=ttyS0,115200 panic=-1 rdinit=/init";
}

namespace {

// Refuses options that cannot make a job (UsageError naming the option).
void check_lava_options(const LavaJobsOptions& o) {
  if (o.job_paths.empty())
    throw UsageError(
        "lava jobs: no job file given; write `nightjar lava jobs JOB.yaml... --kernel "
        "URL_OR_PATH --device-type qemu -o DIR`");
  if (o.kernels.empty())
    throw UsageError(
        "lava jobs: no --kernel given; name each kernel to test with --kernel "
        "(a bzImage path, or an http(s):// URL LAVA downloads)");
  if (o.device_types.empty())
    throw UsageError(
        "lava jobs: no --device-type given; write --device-type qemu, or the LAVA "
        "device type of your boards with --template TYPE=FILE");
  if (o.out_dir.empty()) throw UsageError("lava jobs: no -o DIR given; name the output directory");
  check_priority(o.priority);
  for (const auto& t : o.tags) require_label("--testbox-tags", t);
  if (!o.build.empty()) require_label("--build", o.build);
}

// Device types: qemu is built in; every other needs a template.
std::map<std::string, DeviceTemplate> device_templates(const LavaJobsOptions& o) {
  std::map<std::string, DeviceTemplate> templates;
  for (const auto& [type, path] : o.templates) templates.emplace(type, load_template(type, path));
  for (const auto& type : o.device_types) {
    require_label("--device-type", type);
    if (type != "qemu" && !templates.count(type))
      throw UsageError(fmt::format(
          "--device-type {}: no deploy and boot for it; nightjar knows device type qemu; for "
          "another type give --template {}=FILE with its deploy and boot actions (docs/lava.md "
          "\"Real boards\")",
          type, type));
  }
  return templates;
}

// The --variant values, split at commas; "" (the job's own) when none.
std::vector<std::string> selected_variants(const LavaJobsOptions& o) {
  std::vector<std::string> variants;
  for (const auto& v : o.variants)
    for (const auto& item : split(v, ','))
      if (!item.empty()) variants.push_back(item);
  if (variants.empty()) variants.push_back("");
  return variants;
}

// The ramdisk's /init mounts cgroup2 once, as `run --kernel` does for a
// boot: with the jobs' `vm: cgroup2_options` (docs/jobs.md), else
// kDefaultCgroup2Options. One ramdisk per kernel serves every job, so the
// jobs must agree (UsageError naming both when they do not).
std::string shared_cgroup2_options(const std::map<std::string, std::vector<PlannedJob>>& plans) {
  std::map<std::string, std::string> cgroup2_by_job;
  for (const auto& [variant, plan] : plans)
    for (const auto& pj : plan)
      cgroup2_by_job[pj.job.path] = pj.job.vm_cgroup2_options.value_or(kDefaultCgroup2Options);
  const std::string cgroup2_options =
      cgroup2_by_job.empty() ? kDefaultCgroup2Options : cgroup2_by_job.begin()->second;
  for (const auto& [path, options] : cgroup2_by_job)
    if (options != cgroup2_options)
      throw UsageError(fmt::format(
          "{}: `vm: cgroup2_options` is '{}' but {} asks for '{}': the jobs of one `nightjar "
          "lava jobs` share one ramdisk per kernel, which mounts cgroup2 once; give the jobs the "
          "same options or generate their definitions with separate `nightjar lava jobs` calls",
          path, options, cgroup2_by_job.begin()->first, cgroup2_options));
  return cgroup2_options;
}

// Where LAVA fetches each kernel's image and ramdisk, by kernel source.
struct KernelUrls {
  std::map<std::string, std::string> ramdisk, kernel;
};

// One ramdisk per kernel (its modules and config differ), written into
// `dir`, and the kernel images copied there when DIR is served (--url-base).
KernelUrls build_ramdisks(const LavaJobsOptions& o, const std::vector<LavaKernel>& kernels,
                          const fs::path& dir, const std::string& base,
                          const InitramfsContent& content) {
  KernelUrls urls;
  for (const auto& k : kernels) {
    const std::string file = "ramdisk-" + k.name + ".cpio";
    const fs::path staging = dir / (".staging-" + k.name);
    fs::remove_all(staging);
    build_initramfs(staging / "root", (dir / file).string(), k.image, content);
    fs::remove_all(staging);
    urls.ramdisk[k.source] = base + file;
    urls.kernel[k.source] = k.url;
    if (!o.url_base.empty() && !k.path.empty()) {  // served with DIR
      const std::string copy = "kernel-" + k.name;
      fs::copy_file(k.path, dir / copy, fs::copy_options::overwrite_existing);
      urls.kernel[k.source] = base + copy;
    }
    std::cerr << fmt::format("nightjar: lava: ramdisk for {}: {}\n", k.name, (dir / file).string());
  }
  return urls;
}

// The LAVA job definition of entry `e` (kernel `k`, device type `type`,
// `variant`, whose runs are `plan`): metadata, context, timeouts (the test's
// from the plan's estimated time, three times over, unless --timeout), the
// deploy and boot actions and the test action.
YAML::Node job_definition(const LavaJobsOptions& o, const LavaJobEntry& e, const LavaKernel& k,
                          const std::vector<PlannedJob>& plan,
                          const std::map<std::string, DeviceTemplate>& templates,
                          const KernelUrls& urls) {
  const std::string& type = e.device_type;
  const double est = estimated_seconds(plan, o.runs);
  const int test_minutes =
      o.timeout_minutes.value_or(std::max(10, static_cast<int>(std::ceil(est * 3 / 60.0)) + 5));
  YAML::Node job;
  job["job_name"] = e.job_name;
  job["device_type"] = type;
  job["visibility"] = "public";
  job["priority"] = o.priority;
  for (const auto& t : o.tags) job["tags"].push_back(t);
  YAML::Node metadata;
  metadata["nightjar.jobs"] = join(o.job_paths, " ");
  metadata["nightjar.kernel"] = k.source;
  if (!e.variant.empty()) metadata["nightjar.variant"] = e.variant;
  metadata["nightjar.version"] = NIGHTJAR_VERSION;
  job["metadata"] = metadata;
  const std::string& kernel_url = urls.kernel.at(k.source);
  const std::string& ramdisk_url = urls.ramdisk.at(k.source);
  YAML::Node context;
  if (type == "qemu") context["arch"] = "amd64";
  if (auto t = templates.find(type); t != templates.end() && t->second.doc["context"])
    for (const auto& kv : t->second.doc["context"])
      context[kv.first.Scalar()] = substitute(kv.second, placeholders(kernel_url, ramdisk_url));
  for (const auto& [key, value] : o.lava_context) context[key] = value;
  if (context.size()) job["context"] = context;
  job["timeouts"]["job"] = minutes(kDeployMinutes + kBootMinutes + test_minutes + 5);
  job["timeouts"]["action"] = minutes(kBootMinutes);
  job["timeouts"]["connection"] = minutes(2);
  std::vector<YAML::Node> actions =
      type == "qemu" ? qemu_actions(kernel_url, ramdisk_url)
                     : template_actions(templates.at(type), kernel_url, ramdisk_url);
  actions.push_back(test_action(o, e.variant, test_minutes, type == "qemu"));
  for (const auto& a : actions) job["actions"].push_back(a);
  return job;
}

// The manifest file of `manifest` (kLavaManifest in its directory).
void write_manifest(const LavaManifest& manifest) {
  json jobs = json::array();
  for (const auto& e : manifest.jobs)
    jobs.push_back({{"file", e.file},
                    {"job_name", e.job_name},
                    {"device_type", e.device_type},
                    {"kernel", e.kernel},
                    {"kernel_release", e.kernel_release},
                    {"variant", e.variant},
                    {"runs", e.runs},
                    {"plan", plan_json(e)}});
  write_whole_file((fs::path(manifest.dir) / kLavaManifest).string(),
                   json({{"format", "nightjar-lava 1"}, {"jobs", jobs}}).dump(1) + "\n");
}

}  // namespace

LavaManifest write_lava_jobs(const LavaJobsOptions& o) {
  check_lava_options(o);
  const std::map<std::string, DeviceTemplate> templates = device_templates(o);

  // Every variant's plan, validated as `nightjar run` validates it.
  const std::vector<std::string> variants = selected_variants(o);
  const MachineFacts machine = probe_machine_facts();
  std::map<std::string, std::vector<PlannedJob>> plans;
  for (const auto& v : variants) plans[v] = plan_runs(run_options(o, v), machine);
  const std::string cgroup2_options = shared_cgroup2_options(plans);

  std::vector<LavaKernel> kernels;
  for (const auto& k : o.kernels) kernels.push_back(resolve_kernel(k, o));
  const std::string guest_binary = find_guest_binary(o.guest_binary);
  check_static_busybox();
  if (find_program("cpio").empty())
    throw EnvironmentError("cpio is not installed (builds the ramdisk); apt-get install cpio");

  LavaManifest manifest;
  fs::create_directories(o.out_dir);
  manifest.dir = fs::absolute(o.out_dir).lexically_normal().string();
  const fs::path dir(manifest.dir);
  const std::string base = o.url_base.empty()
                               ? "file://" + manifest.dir + "/"
                               : (o.url_base.back() == '/' ? o.url_base : o.url_base + "/");

  InitramfsContent content;
  content.init = lava_guest_init(cgroup2_options);
  content.guest_binary = guest_binary;
  content.job_paths = o.job_paths;
  const KernelUrls urls = build_ramdisks(o, kernels, dir, base, content);

  int index = 0;
  for (const auto& k : kernels) {
    for (const auto& type : o.device_types) {
      for (const auto& variant : variants) {
        const std::vector<PlannedJob>& plan = plans.at(variant);
        ++index;
        LavaJobEntry e;
        e.file = fmt::format("{:02d}-{}-{}{}.yaml", index, k.name, file_word(type),
                             variant.empty() ? "" : "-" + file_word(variant));
        e.job_name = job_name(o, plan, k, type, variant);
        e.device_type = type;
        e.kernel = k.source;
        e.kernel_release = k.image.release;
        e.variant = variant;
        e.runs = o.runs;
        for (const auto& pj : plan)
          for (const auto& v : pj.variants)
            for (const auto& cell : pj.cells)
              e.plan.push_back({pj.job.name, pj.job.path, std::string(pj.workload->name()), v.name,
                                o.build, cell.params, pj.iterations, pj.warmup});
        YAML::Emitter out;
        out << job_definition(o, e, k, plan, templates, urls);
        write_whole_file(
            (dir / e.file).string(),
            fmt::format("# {} (nightjar lava jobs; docs/lava.md)\n{}\n", e.job_name, out.c_str()));
        manifest.jobs.push_back(std::move(e));
      }
    }
  }
  write_manifest(manifest);
  return manifest;
}

LavaManifest read_lava_manifest(const std::string& dir_flag) {
  const fs::path path = fs::path(dir_flag) / kLavaManifest;
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw UsageError(
        fmt::format("{}: no {} in it; write the jobs first with `nightjar lava jobs "
                    "JOB... --kernel K --device-type T -o {}`",
                    dir_flag, kLavaManifest, dir_flag));
  static constexpr InputKind kManifest{
      .noun = "manifest",
      .expect = "the manifest is the nightjar-lava.json `nightjar lava jobs` writes",
      .max_bytes = 256u << 20,
      .cap = "256 MiB",
      .too_large_fix = "write the jobs again with `nightjar lava jobs`",
  };
  const json doc = json::parse(InputFile(path.string(), kManifest).read_all(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("format", "") != "nightjar-lava 1")
    throw UsageError(path.string() +
                     ": not a manifest of `nightjar lava jobs` (format "
                     "nightjar-lava 1); write the jobs again");
  LavaManifest m;
  m.dir = fs::absolute(dir_flag).lexically_normal().string();
  try {
    for (const auto& j : doc.at("jobs")) {
      LavaJobEntry e;
      e.file = j.at("file").get<std::string>();
      e.job_name = j.at("job_name").get<std::string>();
      e.device_type = j.at("device_type").get<std::string>();
      e.kernel = j.at("kernel").get<std::string>();
      e.kernel_release = j.value("kernel_release", "");
      e.variant = j.value("variant", "");
      e.runs = j.value("runs", 1);
      for (const auto& r : j.at("plan")) {
        LavaPlannedRun p;
        p.job = r.at("job").get<std::string>();
        p.job_path = r.value("job_path", "");
        p.workload = r.at("workload").get<std::string>();
        p.variant = r.at("variant").get<std::string>();
        p.build = r.value("build", "");
        for (const auto& [name, v] : r.at("params").items())
          p.params[name] = ParamValue{v.at("text").get<std::string>(), v.value("number", 0.0)};
        p.iterations = r.value("iterations", 0);
        p.warmup = r.value("warmup", 0);
        e.plan.push_back(std::move(p));
      }
      m.jobs.push_back(std::move(e));
    }
  } catch (const json::exception& e) {
    throw UsageError(path.string() + ": damaged manifest (" + e.what() +
                     "); write the jobs again with `nightjar lava jobs`");
  }
  return m;
}

}  // namespace nightjar
