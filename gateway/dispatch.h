// Dispatch: the life of one S3 request after its header has arrived: parse the target,
// authenticate from the header, route to the handler of the operation, answer errors
// in S3's XML, and write the access-log line. See gateway/README.md.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "gateway/exchange.h"
#include "gateway/services.h"

namespace strata::gateway {

boost::asio::awaitable<void> HandleRequest(Exchange& exchange, Services& services);

}  // namespace strata::gateway
