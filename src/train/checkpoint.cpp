// train/checkpoint.cpp: see checkpoint.hpp for the format and the save's design.
#include "train/checkpoint.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <system_error>

#include <fmt/format.h>

namespace ts::train {

namespace fs = std::filesystem;

namespace {

const char kModel[] = "model.safetensors", kOptim[] = "optimizer.safetensors";
const char kSaveTag[] = ".ts-save-";  // PARENT/.NAME.ts-save-XXXXXX: a save under way, or its leftover
const char kOldTag[] = ".ts-old-";    // PARENT/.NAME.ts-old-XXXXXX: the previous DIR, moved aside (no RENAME_EXCHANGE)
constexpr uint64_t kHeaderAllowance = 16u << 20;  // beside the tensors' bytes, for the size cap

std::string errno_text(int err = errno) { return std::strerror(err); }

// ---- the checksums: one CRC-32 (zlib's, the polynomial 0xEDB88320) per tensor, in the metadata
// of the file that holds it as "crc32:<tensor>" = 8 lowercase hex digits of its bytes.
const char kCrcPrefix[] = "crc32:";

uint32_t crc32_of(const std::vector<unsigned char>& bytes) {
  static const auto table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = table[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string crc_text(const std::vector<unsigned char>& bytes) { return fmt::format("{:08x}", crc32_of(bytes)); }

void add_checksums(const StFile& tensors, StMeta& meta) {
  for (const auto& [name, t] : tensors) meta[kCrcPrefix + name] = crc_text(t.data);
}

// Every tensor of the file against its checksum. A file with no checksum at all is from a
// version before them: true (loaded unchecked, said once by the caller); one with some but not
// this tensor's, or a checksum that differs, was altered: FileError naming the tensor.
bool checksums_missing(const StFile& tensors, const StMeta& meta, const std::string& path) {
  const bool any = std::any_of(meta.begin(), meta.end(), [](const auto& kv) { return kv.first.rfind(kCrcPrefix, 0) == 0; });
  if (!any) return !tensors.empty();
  for (const auto& [name, t] : tensors) {
    const auto it = meta.find(kCrcPrefix + name);
    if (it == meta.end())
      throw FileError(N_("{path}: tensor {key} has no checksum in the __metadata__ though the others have: the file was "
                         "altered; --save it again, or --load another folder"),
                      fmt::arg("path", path), fmt::arg("key", name));
    const std::string found = crc_text(t.data);
    if (it->second != found)
      throw FileError(N_("{path}: tensor {key} does not match its checksum (crc32 {saved} saved, {found} read): the "
                         "file was altered or damaged; --save it again, or --load another folder"),
                      fmt::arg("path", path), fmt::arg("key", name), fmt::arg("saved", it->second.substr(0, 16)),
                      fmt::arg("found", found));
  }
  return false;
}

std::vector<FileError>& pending_notes() {
  static std::vector<FileError> notes;
  return notes;
}

// A file in a checkpoint folder that --save wrote (or an older version's temporary file).
bool ours(const std::string& name) {
  return name == kModel || name == kOptim || name.rfind(std::string(kModel) + ".tmp.", 0) == 0 ||
         name.rfind(std::string(kOptim) + ".tmp.", 0) == 0;
}

// Test-only fault injection (tests/train_fault_test.py walks every point and checks the folder
// afterwards): TS_TEST_KILL_AT=<point> kills the process there with SIGKILL, <point>:TERM sends
// it SIGTERM (which the save holds until it has finished).
void kill_point(const char* point) {
  const char* at = std::getenv("TS_TEST_KILL_AT");
  if (at == nullptr) return;
  const size_t n = std::strlen(point);
  if (std::strcmp(at, point) == 0) ::raise(SIGKILL);
  if (std::strncmp(at, point, n) == 0 && std::strcmp(at + n, ":TERM") == 0) ::raise(SIGTERM);
}

// DIR split into the folder it is (a symlink to a folder is followed, like mkdir -p) and its
// parent, where the new checkpoint is built and swapped in.
struct Target {
  std::string path, parent, name;
};
Target target_of(const std::string& dir) {
  std::error_code ec;
  fs::path real = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (ec) throw FileError(N_("cannot use the folder {dir}: {reason}"), fmt::arg("dir", dir), fmt::arg("reason", ec.message()));
  if (real.filename().empty()) real = real.parent_path();  // "ckpt/" -> "ckpt"
  if (real == real.root_path() || real.filename() == "." || real.filename() == "..")
    throw FileError(N_("cannot save into {dir}: --save replaces its folder, choose one below it"), fmt::arg("dir", dir));
  return {real.string(), real.parent_path().string(), real.filename().string()};
}

// SIGINT, SIGTERM and SIGHUP during a save are held, then take effect once it has finished.
// (Handlers, not a signal mask: the trainer's threads would still take a masked signal.)
volatile std::sig_atomic_t g_held_signal = 0;
extern "C" void hold_signal(int sig) { g_held_signal = sig; }

// The parent folder, opened and locked (flock) for the duration of a save or a cleanup. A
// signal held while waiting for another run's lock ends the wait (and then the run).
class ParentLock {
 public:
  explicit ParentLock(const std::string& parent) : fd_(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
    if (fd_ < 0)
      throw FileIoError(N_("cannot open the folder {dir}: {reason}"), fmt::arg("dir", parent), fmt::arg("reason", errno_text()));
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR || g_held_signal != 0) {
        const int err = errno;
        ::close(fd_);
        throw FileIoError(N_("cannot lock the folder {dir}: {reason}"), fmt::arg("dir", parent), fmt::arg("reason", errno_text(err)));
      }
  }
  ~ParentLock() { ::close(fd_); }  // closing releases the lock
  ParentLock(const ParentLock&) = delete;
  ParentLock& operator=(const ParentLock&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Removes the folder `name` of parent_fd if it holds only checkpoint files (a leftover save or
// the previous checkpoint after the swap); anything else in it is left alone, and so is the
// folder. Never follows a symlink.
void remove_folder(int parent_fd, const std::string& name) {
  const int fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    ::close(fd);
    return;
  }
  while (const dirent* e = ::readdir(d))
    if (ours(e->d_name)) ::unlinkat(fd, e->d_name, 0);
  ::closedir(d);
  ::unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR);  // fails (and keeps it) if something else is inside
}

// The names in the parent folder that start with prefix.
std::vector<std::string> names_with(int parent_fd, const std::string& prefix) {
  std::vector<std::string> found;
  const int fd = ::dup(parent_fd);
  DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
  if (d == nullptr) {
    if (fd >= 0) ::close(fd);
    return found;
  }
  ::rewinddir(d);  // the dup shares parent_fd's offset, which an earlier listing left at the end
  while (const dirent* e = ::readdir(d))
    if (std::string(e->d_name).rfind(prefix, 0) == 0) found.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(found.begin(), found.end());
  return found;
}

// What killed saves left beside DIR; the caller holds the parent's lock, so no save is running.
// A previous checkpoint moved aside (no RENAME_EXCHANGE) whose save was killed before the new
// one took its place goes back to DIR first: it is the checkpoint, not a leftover.
void remove_leftovers(int parent_fd, const std::string& name) {
  struct stat st {};
  for (const std::string& f : names_with(parent_fd, "." + name + kOldTag))
    if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
      ::renameat(parent_fd, f.c_str(), parent_fd, name.c_str());
    else
      remove_folder(parent_fd, f);
  for (const std::string& f : names_with(parent_fd, "." + name + kSaveTag)) remove_folder(parent_fd, f);
}

class SignalsHeld {
 public:
  SignalsHeld() {
    struct sigaction sa {};
    sa.sa_handler = hold_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < 3; ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
  }
  ~SignalsHeld() {
    for (size_t i = 0; i < 3; ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
    if (g_held_signal != 0) ::raise(g_held_signal);  // as if it had arrived now
  }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction old_[3];
};

void write_file(int dir_fd, const std::string& dir, const char* name, const StFile& tensors, const StMeta& meta) {
  const std::string path = dir + "/" + name;
  const int fd = ::openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw FileIoError(N_("cannot create {path}: {reason}"), fmt::arg("path", path), fmt::arg("reason", errno_text()));
  try {
    write_safetensors(fd, path, tensors, meta);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0)
    throw FileIoError(N_("cannot write {path}: {reason}"), fmt::arg("path", path), fmt::arg("reason", errno_text()));
}

std::string new_checkpoint_id() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}", rd(), rd());
}

// A metadata value that must be a whole number in [lo, hi], written with plain digits.
int64_t whole(const StMeta& meta, const std::string& key, int64_t lo, int64_t hi, const std::string& path) {
  const auto it = meta.find(key);
  const std::string v = it == meta.end() ? std::string() : it->second;
  const bool digits = !v.empty() && v.size() <= 18 && (v == "0" || v[0] != '0') &&
                      std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int64_t n = digits ? std::stoll(v) : -1;
  if (!digits || n < lo || n > hi)
    throw FileError(N_("{path} has no valid {key} in its __metadata__ (a whole number {lo}..{hi} expected, got '{v}'): "
                       "it was not written by --save; train and save it again"),
                    fmt::arg("path", path), fmt::arg("key", key), fmt::arg("lo", lo), fmt::arg("hi", hi),
                    fmt::arg("v", v));
  return n;
}

// Opens DIR once; both files are then read through this handle. A DIR that a killed save left
// aside (no RENAME_EXCHANGE) is put back first, under the parent's lock.
int open_checkpoint_folder(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    const Target t = target_of(dir);
    const int pfd = ::open(t.parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    const bool aside = pfd >= 0 && !names_with(pfd, "." + t.name + kOldTag).empty();
    if (pfd >= 0) ::close(pfd);
    if (aside) {
      ParentLock lock(t.parent);
      remove_leftovers(lock.fd(), t.name);
      fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      const std::vector<std::string> left = names_with(lock.fd(), "." + t.name + kOldTag);
      if (fd < 0 && !left.empty())  // not put back (a read-only parent?): say where it is
        throw FileError(N_("no checkpoint folder {dir}: a save killed mid-way left the previous checkpoint in {aside}, "
                           "and it could not be moved back; rename it to {dir}"),
                        fmt::arg("dir", dir), fmt::arg("aside", t.parent + "/" + left.front()));
    } else {
      errno = ENOENT;
    }
  }
  if (fd >= 0) return fd;
  const int err = errno;
  if (err == ENOTDIR) throw FileError(N_("{dir} is not a folder: --load takes the folder --save DIR wrote"), fmt::arg("dir", dir));
  if (err == ENOENT) throw FileError(N_("no checkpoint folder {dir} (write one with --save DIR)"), fmt::arg("dir", dir));
  if (err == EIO || err == ENOMEM || err == EMFILE || err == ENFILE)
    throw FileIoError(N_("cannot open the folder {dir}: {reason}"), fmt::arg("dir", dir), fmt::arg("reason", errno_text(err)));
  throw FileError(N_("cannot open the folder {dir}: {reason}"), fmt::arg("dir", dir), fmt::arg("reason", errno_text(err)));
}

StFile read_file(int dir_fd, const std::string& dir, const char* name, StMeta* meta, uint64_t cap, bool header_only) {
  const std::string path = dir + "/" + name;
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT)
      throw FileError(N_("the checkpoint {dir} has no {name}: write one with --save DIR"), fmt::arg("dir", dir),
                      fmt::arg("name", name));
    if (err == EIO || err == ENOMEM || err == EMFILE || err == ENFILE)
      throw FileIoError(N_("cannot open {path}: {reason}"), fmt::arg("path", path), fmt::arg("reason", errno_text(err)));
    throw FileError(N_("cannot open {path}: {reason}"), fmt::arg("path", path), fmt::arg("reason", errno_text(err)));
  }
  try {
    StFile f = header_only ? (read_safetensors_metadata_fd(fd, path, meta), StFile{})
                           : load_safetensors_fd(fd, path, meta, cap);
    ::close(fd);
    return f;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

// The format: older checkpoints (before ts_checkpoint 2) hold no settings and are refused.
void check_format(const StMeta& meta, const std::string& path) {
  const auto it = meta.find("ts_checkpoint");
  if (it == meta.end() || it->second != kCheckpointFormat)
    throw FileError(N_("{path} is a checkpoint of another format (ts_checkpoint '{found}'; this version reads {format}): "
                       "train again and --save it with this version"),
                    fmt::arg("path", path), fmt::arg("found", it == meta.end() ? std::string() : it->second),
                    fmt::arg("format", kCheckpointFormat));
}

// The kind: a checkpoint of another chapter's model is refused naming the chapter that reads it.
void check_kind(const StMeta& meta, const std::string& kind, const std::string& path) {
  const auto it = meta.find("model");
  const std::string found = it == meta.end() ? std::string(kTransformerKind) : it->second;  // ch11's, before kinds
  if (found == kind) return;
  const auto chapter = [](const std::string& k) {
    return std::string(k == kTransformerKind ? "ch11_training" : k == "gpt" ? "ch12_gpt" : k == "classifier" ? "ch13_classifier" : "?");
  };
  throw FileError(N_("{path} holds a checkpoint of another model ({found}, saved by {by}); this chapter reads {kind} "
                     "checkpoints: --load a folder this chapter saved"),
                  fmt::arg("path", path), fmt::arg("found", found), fmt::arg("by", chapter(found)), fmt::arg("kind", kind));
}

// One atomic exchange of two names in the folder fd: Linux's renameat2(RENAME_EXCHANGE) (glibc
// 2.28+ declares it in <stdio.h>), macOS's renameatx_np(RENAME_SWAP) (10.12+, <stdio.h>; written
// for macOS, which this project cannot build or test here). Where neither exists it fails with
// ENOSYS, and swap_in takes the move-aside path, as on a filesystem without the exchange.
int exchange_names(int fd, const char* a, const char* b) {
#if defined(RENAME_EXCHANGE)
  return ::renameat2(fd, a, fd, b, RENAME_EXCHANGE);
#elif defined(__APPLE__) && defined(RENAME_SWAP)
  return ::renameatx_np(fd, a, fd, b, RENAME_SWAP);
#else
  (void)fd, (void)a, (void)b;
  errno = ENOSYS;
  return -1;
#endif
}

// The exchange's errno for "this filesystem (or system) has no exchange": Linux says EINVAL
// (or ENOSYS, EOPNOTSUPP); macOS says ENOTSUP, which is not EOPNOTSUPP there.
bool no_exchange_here(int err) {
#if ENOTSUP != EOPNOTSUPP
  if (err == ENOTSUP) return true;
#endif
  return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP;
}

// Puts the folder tmp_name in the place of name (both in the locked parent): one exchange, or a
// plain rename when there is no name yet. Returns the name the previous checkpoint has now ("" if
// there was none). Without the exchange (EINVAL: the filesystem lacks it; TS_TEST_NO_EXCHANGE
// pretends so in tests), the previous folder is moved aside first and put back if the second
// rename fails; a kill between the two is mended by remove_leftovers.
std::string swap_in(int parent_fd, const std::string& tmp_name, const std::string& name, const std::string& dir) {
  const bool exchange = std::getenv("TS_TEST_NO_EXCHANGE") == nullptr;
  if (exchange && exchange_names(parent_fd, tmp_name.c_str(), name.c_str()) == 0) return tmp_name;
  const int err = errno;
  // (whether name exists is asked, not read from err: an exchange that is missing altogether
  // fails with ENOSYS before it looks at the names)
  const bool missing =
      (exchange && err == ENOENT) || ::faccessat(parent_fd, name.c_str(), F_OK, AT_SYMLINK_NOFOLLOW) != 0;
  if (!missing && exchange && !no_exchange_here(err))
    throw FileIoError(N_("cannot move the new checkpoint to {dir}: {reason}"), fmt::arg("dir", dir), fmt::arg("reason", errno_text(err)));
  // the parent is locked: no other save can create name between the check and the rename
  if (missing) {
    if (::renameat(parent_fd, tmp_name.c_str(), parent_fd, name.c_str()) != 0)
      throw FileIoError(N_("cannot move the new checkpoint to {dir}: {reason}"), fmt::arg("dir", dir), fmt::arg("reason", errno_text()));
    return "";
  }
  std::string aside = "." + name + kOldTag + tmp_name.substr(tmp_name.size() - 6);
  if (::renameat(parent_fd, name.c_str(), parent_fd, aside.c_str()) != 0)
    throw FileIoError(N_("cannot move the previous checkpoint {dir} aside: {reason}"), fmt::arg("dir", dir),
                      fmt::arg("reason", errno_text()));
  kill_point("aside");
  if (::renameat(parent_fd, tmp_name.c_str(), parent_fd, name.c_str()) != 0) {
    const int err = errno;
    ::renameat(parent_fd, aside.c_str(), parent_fd, name.c_str());  // the previous one back
    throw FileIoError(N_("cannot move the new checkpoint to {dir}: {reason}"), fmt::arg("dir", dir), fmt::arg("reason", errno_text(err)));
  }
  return aside;
}

}  // namespace

void prepare_save_folder(const std::string& dir) {
  const Target t = target_of(dir);
  struct stat st {};
  if (::lstat(t.path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode))
      throw FileError(N_("{dir} is not a folder: give --save a new or empty folder"), fmt::arg("dir", dir));
    struct stat pst {};
    if (::stat(t.parent.c_str(), &pst) == 0 && (pst.st_dev != st.st_dev || pst.st_ino == st.st_ino))
      throw FileError(N_("{dir} is a mount point: --save replaces its folder as a whole, choose a folder inside it"),
                      fmt::arg("dir", dir));
    // the system refusing to write (or read) is an I/O failure (exit 1), as every failed write is
    if (::access(t.path.c_str(), W_OK | X_OK) != 0)
      throw FileIoError(N_("cannot write to the folder {dir}: choose a writable folder"), fmt::arg("dir", dir));
    DIR* d = ::opendir(t.path.c_str());
    if (d == nullptr)
      throw FileIoError(N_("cannot read the folder {dir}: {reason}"), fmt::arg("dir", dir), fmt::arg("reason", errno_text()));
    std::string stranger, link;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      struct stat est {};
      const bool regular = ::fstatat(::dirfd(d), name.c_str(), &est, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(est.st_mode);
      if (ours(name) && !regular && link.empty()) link = name;
      if (!ours(name) && stranger.empty()) stranger = name;
    }
    ::closedir(d);
    if (!link.empty())
      throw FileError(N_("refusing to replace {path}: it is not a regular file (a symbolic link?)"),
                      fmt::arg("path", dir + "/" + link));
    if (!stranger.empty())
      throw FileError(N_("{dir} holds {name}, which --save did not write: a checkpoint folder holds only its two files, "
                         "and --save replaces the folder as a whole; choose a new or empty folder"),
                      fmt::arg("dir", dir), fmt::arg("name", stranger));
  } else {
    std::error_code ec;
    fs::create_directories(t.parent, ec);
    if (ec)
      throw FileIoError(N_("cannot create the folder {dir}: {reason}"), fmt::arg("dir", t.parent), fmt::arg("reason", ec.message()));
  }
  if (::access(t.parent.c_str(), W_OK | X_OK) != 0)
    throw FileIoError(N_("cannot write to {parent}: --save builds the new checkpoint beside {dir} and swaps it in, so "
                         "its parent folder must be writable"),
                      fmt::arg("parent", t.parent), fmt::arg("dir", dir));
  ParentLock lock(t.parent);
  remove_leftovers(lock.fd(), t.name);
}

void save_checkpoint_folder(const std::string& dir, const std::string& kind, int64_t step, CheckpointFiles f) {
  // 1) the two files' metadata: format, kind, step and one id tie them together
  const std::string id = new_checkpoint_id();
  for (StMeta* meta : {&f.wmeta, &f.ometa}) {
    (*meta)["ts_checkpoint"] = kCheckpointFormat;
    (*meta)["model"] = kind;
    (*meta)["step"] = std::to_string(step);
    (*meta)["checkpoint_id"] = id;
  }
  add_checksums(f.weights, f.wmeta);
  add_checksums(f.optim, f.ometa);
  // 2) a new folder beside DIR, both files written and flushed, then one swap
  const Target t = target_of(dir);
  struct stat st {};
  const bool exists = ::lstat(t.path.c_str(), &st) == 0;
  if (exists && !S_ISDIR(st.st_mode))
    throw FileError(N_("{dir} is not a folder: give --save a new or empty folder"), fmt::arg("dir", dir));
  SignalsHeld held;
  ParentLock lock(t.parent);
  remove_leftovers(lock.fd(), t.name);
  std::string tmp = t.parent + "/." + t.name + kSaveTag + "XXXXXX";
  if (::mkdtemp(tmp.data()) == nullptr)
    throw FileIoError(N_("cannot create a folder beside {dir}: {reason}"), fmt::arg("dir", dir), fmt::arg("reason", errno_text()));
  const std::string tmp_name = fs::path(tmp).filename().string();
  kill_point("folder");
  std::string previous;  // where the previous checkpoint is after the swap ("" if there was none)
  try {
    const int dfd = ::open(tmp.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) throw FileIoError(N_("cannot open {path}: {reason}"), fmt::arg("path", tmp), fmt::arg("reason", errno_text()));
    try {
      const mode_t mask = ::umask(0);
      ::umask(mask);
      // the folder keeps the mode the previous one had (mkdtemp makes it private)
      if (::fchmod(dfd, exists ? (st.st_mode & 07777) : (0777 & ~mask)) != 0)
        throw FileIoError(N_("cannot set the mode of {path}: {reason}"), fmt::arg("path", tmp), fmt::arg("reason", errno_text()));
      write_file(dfd, tmp, kModel, f.weights, f.wmeta);
      kill_point("model");
      write_file(dfd, tmp, kOptim, f.optim, f.ometa);
      kill_point("optimizer");
      if (::fsync(dfd) != 0)
        throw FileIoError(N_("cannot flush {path}: {reason}"), fmt::arg("path", tmp), fmt::arg("reason", errno_text()));
    } catch (...) {
      ::close(dfd);
      throw;
    }
    ::close(dfd);
    kill_point("swap");
    previous = swap_in(lock.fd(), tmp_name, t.name, dir);
  } catch (...) {
    remove_folder(lock.fd(), tmp_name);
    throw;
  }
  kill_point("swapped");
  const bool durable = ::fsync(lock.fd()) == 0;
  const int err = errno;
  if (!previous.empty()) remove_folder(lock.fd(), previous);
  if (!durable) throw FileIoError(N_("cannot flush {path}: {reason}"), fmt::arg("path", t.parent), fmt::arg("reason", errno_text(err)));
}

StMeta checkpoint_metadata(const std::string& dir, const std::string& kind) {
  const int dfd = open_checkpoint_folder(dir);
  StMeta meta;
  try {
    read_file(dfd, dir, kModel, &meta, 0, true);
  } catch (...) {
    ::close(dfd);
    throw;
  }
  ::close(dfd);
  const std::string path = dir + "/" + kModel;
  check_format(meta, path);
  check_kind(meta, kind, path);
  return meta;
}

int64_t checkpoint_int(const StMeta& meta, const std::string& key, int64_t lo, int64_t hi, const std::string& path) {
  return whole(meta, key, lo, hi, path);
}

int64_t read_checkpoint_folder(const std::string& dir, const std::string& kind, uint64_t weight_bytes,
                               CheckpointFiles& out) {
  const std::string mpath = dir + "/" + kModel, opath = dir + "/" + kOptim;
  const int dfd = open_checkpoint_folder(dir);
  CheckpointFiles f;
  try {
    f.weights = read_file(dfd, dir, kModel, &f.wmeta, weight_bytes + kHeaderAllowance, false);
    f.optim = read_file(dfd, dir, kOptim, &f.ometa, 2 * weight_bytes + kHeaderAllowance, false);
  } catch (...) {
    ::close(dfd);
    throw;
  }
  ::close(dfd);
  check_format(f.wmeta, mpath);
  check_kind(f.wmeta, kind, mpath);
  check_format(f.ometa, opath);
  const int64_t step = whole(f.wmeta, "step", 0, kMaxCheckpointStep, mpath);
  const int64_t ostep = whole(f.ometa, "step", 0, kMaxCheckpointStep, opath);
  if (step != ostep || f.wmeta["checkpoint_id"] != f.ometa["checkpoint_id"])
    throw FileError(N_("checkpoint {dir} is inconsistent: its two files come from two saves (model step {step}, "
                       "optimizer step {ostep}): save it again, or --load another folder"),
                    fmt::arg("dir", dir), fmt::arg("step", step), fmt::arg("ostep", ostep));
  // every tensor's bytes against the checksum --save wrote beside it
  const bool unchecked_model = checksums_missing(f.weights, f.wmeta, mpath);
  const bool unchecked_optim = checksums_missing(f.optim, f.ometa, opath);
  static bool said = false;
  if ((unchecked_model || unchecked_optim) && !said) {
    said = true;
    pending_notes().emplace_back(N_("note: {dir} was saved by an older version, without checksums: its tensors are "
                                    "loaded unchecked; --save it again to add them"),
                                 fmt::arg("dir", dir));
  }
  out = std::move(f);
  return step;
}

std::vector<FileError> take_checkpoint_notes() {
  std::vector<FileError> notes;
  notes.swap(pending_notes());
  return notes;
}

}  // namespace ts::train
