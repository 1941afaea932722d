// IndexFixture: a RocksIndex in a fresh temporary directory per test, removed after it,
// and reopened on demand (to check what survives a restart).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>

#include "metadata/index.h"

namespace strata::metadata::testing {

class IndexFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = std::filesystem::temp_directory_path() /
           ("strata-index-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(dir_);
    Reopen();
  }
  void TearDown() override {
    index_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  void Reopen() {
    index_.reset();
    auto opened = Index::Open(dir_.string(), IndexOptions{.sync = false});
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    index_ = std::move(opened).value();
  }

  std::filesystem::path dir_;
  std::unique_ptr<Index> index_;
};

}  // namespace strata::metadata::testing
