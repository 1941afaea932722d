// Server: the HTTP(S) front end. One io_context per core thread, each with its own
// SO_REUSEPORT acceptor per listen address; a connection lives on the core that accepted
// it. Run() blocks until SIGTERM/SIGINT, then stops accepting, lets in-flight requests
// finish within server.shutdown_grace, and returns.
#pragma once

#include <memory>

#include "common/error.h"
#include "gateway/services.h"

namespace strata::gateway {

class Server {
 public:
  explicit Server(Services& services);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds every listen address (errors name the address) and loads TLS material.
  Result<void> Start();
  // Serves until a termination signal; returns once every core has stopped.
  void Run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace strata::gateway
