#include "storage/peer/hopping_call.h"

#include <utility>

#include "common/run_on.h"

namespace strata::storage::peer {

PeerTask<std::optional<std::string>> HoppingCall::Read() {
  co_return co_await RunOn(home_, call_.Read());
}

PeerTask<void> HoppingCall::Respond(PeerResponse response) {
  co_return co_await RunOn(home_, call_.Respond(std::move(response)));
}

PeerTask<void> HoppingCall::Write(std::string chunk) {
  co_return co_await RunOn(home_, call_.Write(std::move(chunk)));
}

PeerTask<void> HoppingCall::CloseResponse() {
  co_return co_await RunOn(home_, call_.CloseResponse());
}

}  // namespace strata::storage::peer
