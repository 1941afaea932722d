// HoppingCall: a call whose connection lives on one thread (a core's, where the peer port
// handed it: TcpTransport::SetHandOff), given to a handler that runs on another (the
// cluster's). Each step runs on the call's own executor and resumes the handler on its
// own (private to storage/; storage/cluster.cc uses it for the ops a handed-off
// connection carries besides forwarded requests, as a caller that mixes ops on its
// connections sends).
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <optional>
#include <string>

#include "storage/peer_transport.h"

namespace strata::storage::peer {

class HoppingCall final : public PeerIncomingCall {
 public:
  // `call` is used on `home` only, and outlives this.
  HoppingCall(PeerIncomingCall& call, boost::asio::any_io_executor home)
      : call_(call), home_(std::move(home)) {}

  // Set before the handler runs and never changed while it does: read from any thread.
  const std::string& peer() const override { return call_.peer(); }
  const PeerRequest& request() const override { return call_.request(); }

  PeerTask<std::optional<std::string>> Read() override;
  PeerTask<void> Respond(PeerResponse response) override;
  PeerTask<void> Write(std::string chunk) override;
  PeerTask<void> CloseResponse() override;

 private:
  PeerIncomingCall& call_;
  boost::asio::any_io_executor home_;
};

}  // namespace strata::storage::peer
