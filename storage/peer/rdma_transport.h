// RdmaTransport: the PeerTransport over RDMA (private to storage/; the chooser,
// storage/peer/make_transport.h, makes it when the machine has an RDMA device). rdma-core:
// librdmacm sets up the connections (an event channel, rdma_resolve_addr / route,
// rdma_connect / listen / accept), each connection is one RC queue pair whose control
// messages (storage/peer/rdma_wire.h) go by SEND/RECV, and the bytes of payloads and
// streams are RDMA READs by the receiving side from the sender's registered chunk buffers
// (storage/peer/rdma_buffer_pool.h). RdmaSession (storage/peer/rdma_session.h) decides
// everything; this class only carries its actions out and feeds it the completions. The
// completion channel's and the event channel's file descriptors are watched with Asio
// (posix::stream_descriptor), so everything runs on the executor, one thread.
//
// NOT RUN ON HARDWARE. This machine has no RDMA device and no kernel RDMA support: this
// file is compiled and linked, never executed by a test. Its logic lives in the tested
// RdmaSession; the verbs calls here follow rdma-core's documented use and may still be
// wrong in ways only a device would show.
//
// Limits (by design, bounded): at most `max_connections` accepted connections, each with
// max_sends_in_flight() RECV buffers and as many send slots of kRdmaMaxMessage bytes; one
// call at a time per connection; a new connection (and handshake) per call on the client
// side (no pool of idle connections yet).
//
// Threads: as TcpTransport (storage/peer/tcp_transport.h).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "storage/peer_transport.h"

namespace strata::storage::peer {

struct RdmaTransportOptions {
  std::string node;
  std::string secret;
  std::string listen = "127.0.0.1:0";  // [cluster] peer_listen (an address of the RDMA NIC)
  std::size_t max_connections = 64;
  std::uint32_t credits = 4;  // chunks outstanding per call and direction
  std::chrono::milliseconds connect_timeout{5'000};
};

class RdmaTransport final : public PeerTransport {
 public:
  // Opens the first RDMA device, its protection domain and the chunk pool (registered
  // once): kUnavailable when there is no device or it cannot be opened.
  static Result<std::unique_ptr<RdmaTransport>> Make(boost::asio::any_io_executor executor,
                                                     RdmaTransportOptions options);
  ~RdmaTransport() override;
  RdmaTransport(const RdmaTransport&) = delete;
  RdmaTransport& operator=(const RdmaTransport&) = delete;

  Result<void> Serve(PeerHandler handler) override;
  PeerTask<std::unique_ptr<PeerCall>> Call(std::string peer, const PeerRequest& request) override;
  void SetEpoch(std::uint64_t epoch) override;
  void Stop() override;

  struct State;

 private:
  explicit RdmaTransport(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace strata::storage::peer
