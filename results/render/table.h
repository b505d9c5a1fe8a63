// The one layout base of nightjar's plain-text tables: columns sized to their
// widest cell, left- or right-aligned, separated by two spaces, no trailing
// blanks. Renderers fill rows from stored records and print the result.
#pragma once

#include <string>
#include <vector>

namespace nightjar {

/// A plain-text table.
class TextTable {
 public:
  enum class Align { left, right };
  /// One column per header; `align` per column (default left).
  explicit TextTable(std::vector<std::string> headers, std::vector<Align> align = {});
  /// Adds a row; missing cells are blank, extra cells are an error (std::invalid_argument).
  void add_row(std::vector<std::string> cells);
  std::size_t rows() const { return rows_.size(); }
  /// The table, header first, each line ending in '\n', no trailing blanks.
  std::string render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> align_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace nightjar
