// SPDX-License-Identifier: Apache-2.0
#include "hrt_server/store.h"

#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "hrt_server/protocol.h"

namespace openbpu::tools {

namespace {

bool make_dir(const std::string& d, std::string* error) {
  if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) {
    *error = "cannot create '" + d + "': " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::lstat(d.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    *error = "'" + d + "' is not a directory";
    return false;
  }
  return true;
}

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  ::remove(path);
  return 0;
}

uint64_t file_size(const std::string& p, bool* exists) {
  struct stat st;
  *exists = ::lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  return *exists ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

void remove_tree(const std::string& dir) {
  // Depth first, physical walk: symlinks are removed, not followed.
  ::nftw(dir.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

bool BlobStore::open(const std::string& root, std::string* error) {
  root_ = root;
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  for (size_t p = root_.find('/', 1); p != std::string::npos; p = root_.find('/', p + 1))
    ::mkdir(root_.substr(0, p).c_str(), 0700);  // parents (errors show below)
  if (!make_dir(root_, error) || !make_dir(root_ + "/blobs", error) || !make_dir(root_ + "/partial", error))
    return false;
  // Absolute: runs start in their own folder and link blobs from there.
  char* abs = ::realpath(root_.c_str(), nullptr);
  if (abs == nullptr) {
    *error = "cache folder '" + root_ + "': " + std::strerror(errno);
    return false;
  }
  root_ = abs;
  std::free(abs);
  remove_tree(root_ + "/runs");
  return make_dir(root_ + "/runs", error);
}

bool BlobStore::has(const std::string& sha) const {
  bool exists = false;
  file_size(blob_path(sha), &exists);
  return exists;
}

uint64_t BlobStore::held(const std::string& sha, bool* complete) const {
  bool exists = false;
  const uint64_t n = file_size(blob_path(sha), &exists);
  *complete = exists;
  if (exists) return n;
  return file_size(root_ + "/partial/" + sha, &exists);
}

int32_t BlobStore::append(const std::string& sha, uint64_t total, uint64_t offset, const uint8_t* data, size_t size,
                          uint64_t owner, uint64_t max_size, bool* complete, std::string* error) {
  *complete = false;
  if (!wire::is_sha256_hex(sha)) {
    *error = "bad sha256";
    return wire::kBadRequest;
  }
  if (has(sha)) {
    *complete = true;
    return 0;
  }
  if (total > max_size) {
    *error = "file of " + std::to_string(total) + " bytes is above the server's limit of " + std::to_string(max_size);
    return wire::kTooLarge;
  }
  auto it = uploading_.find(sha);
  if (it != uploading_.end() && it->second != owner) {
    *error = "another client is uploading this file";
    return wire::kBusy;
  }
  uploading_[sha] = owner;
  const std::string part = root_ + "/partial/" + sha;
  bool exists = false;
  const uint64_t have = file_size(part, &exists);
  if (offset != have) {
    *error = "chunk at offset " + std::to_string(offset) + ", the server holds " + std::to_string(have) + " bytes";
    return wire::kBadRequest;
  }
  const int fd = ::open(part.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    *error = "cannot write the upload: " + std::string(std::strerror(errno));
    return wire::kInternal;
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  const bool ok = done == size && ::close(fd) == 0;
  if (!ok) {
    ::remove(part.c_str());
    *error = "cannot write the upload (disk full?)";
    return wire::kInternal;
  }
  if (offset + size < total) return 0;
  std::string hex;
  if (!wire::sha256_file(part, &hex, error)) {
    ::remove(part.c_str());
    return wire::kInternal;
  }
  uploading_.erase(sha);
  if (hex != sha) {
    ::remove(part.c_str());
    *error = "the uploaded bytes have sha256 " + hex + ", not " + sha;
    return wire::kBadRequest;
  }
  if (::rename(part.c_str(), blob_path(sha).c_str()) != 0) {
    *error = "cannot store the upload: " + std::string(std::strerror(errno));
    return wire::kInternal;
  }
  *complete = true;
  return 0;
}

void BlobStore::release(uint64_t owner) {
  for (auto it = uploading_.begin(); it != uploading_.end();)
    it = it->second == owner ? uploading_.erase(it) : std::next(it);
}

bool BlobStore::make_run_dir(uint64_t id, std::string* dir, std::string* error) {
  *dir = root_ + "/runs/" + std::to_string(id);
  remove_tree(*dir);
  return make_dir(*dir, error);
}

}  // namespace openbpu::tools
