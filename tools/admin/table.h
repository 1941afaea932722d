// The tables strata-admin prints: text columns left-aligned, number columns right-aligned,
// each as wide as its widest cell, two spaces between columns.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace strata::admin {

class TextTable {
 public:
  // The first `left_columns` columns are text (left-aligned), the rest numbers.
  TextTable(std::vector<std::string> header, std::size_t left_columns)
      : left_columns_(left_columns) {
    rows_.push_back(std::move(header));
  }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const;

 private:
  std::size_t left_columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace strata::admin
