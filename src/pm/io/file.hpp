#pragma once
// Reading a whole input file, with its size bounded before anything is
// allocated, so that no input can exhaust memory.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "pm/category/error.hpp"

namespace pm::io {

// `what` names the expected content in messages ("a .npy file").
inline std::string read_file(const std::string &path, std::uint64_t max_bytes,
                             const std::string &what) {
  // Only regular files: a directory, FIFO or device could block or never end.
  std::error_code ec;
  require(std::filesystem::is_regular_file(path, ec), path,
          ": cannot open the file, expected a regular file (", what, ")");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  require(bool(in), path, ": cannot open the file, expected a readable file (", what, ")");
  const std::streamoff size = in.tellg();
  require(size >= 0 && std::uint64_t(size) <= max_bytes, path, ": file size ", size,
          " bytes, expected at most ", max_bytes, " for ", what);
  std::string bytes(std::size_t(size), '\0');
  in.seekg(0);
  in.read(bytes.data(), size);
  require(bool(in), path, ": read error, expected ", size, " bytes");
  return bytes;
}

} // namespace pm::io
