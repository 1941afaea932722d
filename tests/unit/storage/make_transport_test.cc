// The peer transport's chooser (storage/peer/make_transport.*): on this machine, which has
// no RDMA device (nor kernel RDMA support), "auto" gives TCP and logs exactly one line
// saying so; "rdma" is a start error; "tcp" never probes. (RdmaTransport itself has never
// run: no test pretends to.)
#include "storage/peer/make_transport.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <string>
#include <thread>

#include "storage/peer/tcp_transport.h"

namespace strata::storage::peer {
namespace {

class MakeTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
    saved_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("choose-test", log_));
    cluster_.node = "gw-a";
    cluster_.secret = "0123456789abcdef";
    cluster_.peer_listen = "127.0.0.1:0";
  }
  void TearDown() override {
    made_.reset();  // TcpTransport stops on the running io_context
    work_.reset();
    thread_.join();
    spdlog::set_default_logger(saved_);
  }
  std::vector<std::string> Lines() const { return log_->last_formatted(); }

  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_{
      io_.get_executor()};
  std::thread thread_{[this] { io_.run(); }};
  std::unique_ptr<PeerTransport> made_;
  ClusterConfig cluster_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> log_;
  std::shared_ptr<spdlog::logger> saved_;
};

TEST_F(MakeTransportTest, WithoutADeviceAutoIsTcpAndOneLineSaysSo) {
  if (CountRdmaDevices() > 0) {
    GTEST_SKIP() << "this machine has an RDMA device";
  }
  auto made = MakePeerTransport(io_.get_executor(), cluster_);  // the real probe
  ASSERT_TRUE(made.ok()) << made.error().message;
  EXPECT_EQ(made->mechanism, "tcp");
  EXPECT_NE(dynamic_cast<TcpTransport*>(made->transport.get()), nullptr);
  const auto lines = Lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("RDMA is not available"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("TCP"), std::string::npos) << lines[0];
  EXPECT_EQ(made->counters().accepted, 0u);
  made_ = std::move(made->transport);
}

TEST_F(MakeTransportTest, RdmaForcedWithoutADeviceIsAStartError) {
  cluster_.transport = ClusterTransport::kRdma;
  auto made = MakePeerTransport(io_.get_executor(), cluster_, [] { return 0; });
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(made.error().message.find("no RDMA device"), std::string::npos);
}

TEST_F(MakeTransportTest, TcpForcedNeverProbesNorLogs) {
  cluster_.transport = ClusterTransport::kTcp;
  int probes = 0;
  auto made = MakePeerTransport(io_.get_executor(), cluster_, [&] { return ++probes; });
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(made->mechanism, "tcp");
  EXPECT_EQ(probes, 0);
  EXPECT_TRUE(Lines().empty());
  made_ = std::move(made->transport);
}

}  // namespace
}  // namespace strata::storage::peer
