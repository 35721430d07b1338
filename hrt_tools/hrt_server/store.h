// SPDX-License-Identifier: Apache-2.0
// hrt_server's cache folder: uploaded files kept by content (blobs/<sha256>,
// complete and verified), uploads in progress (partial/<sha256>) and the
// working folders of runs (runs/<id>). Every path is built from a checked
// SHA-256 name or a number, never from client text, so nothing is written
// outside the folder.
#ifndef OPENBPU_HRT_TOOLS_HRT_SERVER_STORE_H_
#define OPENBPU_HRT_TOOLS_HRT_SERVER_STORE_H_

#include <cstdint>
#include <map>
#include <string>

namespace openbpu::tools {

class BlobStore {
 public:
  // Creates the folders; removes leftovers of runs of a previous server.
  bool open(const std::string& root, std::string* error);
  const std::string& root() const { return root_; }

  std::string blob_path(const std::string& sha) const { return root_ + "/blobs/" + sha; }
  bool has(const std::string& sha) const;
  // Bytes held for a blob: its size when complete, else the partial upload's.
  uint64_t held(const std::string& sha, bool* complete) const;

  // Appends a chunk to the upload of `sha` by `owner` (a connection id).
  // The chunk must start at the bytes held. When the blob is complete its
  // SHA-256 is checked and it moves to blobs/. Returns 0 or a wire
  // ErrorCode with *error.
  int32_t append(const std::string& sha, uint64_t total, uint64_t offset, const uint8_t* data, size_t size,
                 uint64_t owner, uint64_t max_size, bool* complete, std::string* error);
  // Forgets the upload owners of a closed connection (its partial files stay
  // for a later resume).
  void release(uint64_t owner);

  // A new empty folder runs/<id>.
  bool make_run_dir(uint64_t id, std::string* dir, std::string* error);

 private:
  std::string root_;
  std::map<std::string, uint64_t> uploading_;  // sha -> connection
};

// Deletes a folder and everything in it (no symlink is followed).
void remove_tree(const std::string& dir);

}  // namespace openbpu::tools

#endif  // OPENBPU_HRT_TOOLS_HRT_SERVER_STORE_H_
