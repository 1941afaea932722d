// CredentialStore: where the verifier looks up the secret for an access key.
// Implementations: the gateway's store over config users and the index; tests' MemCredentialStore.
// Find() may be called from any thread concurrently.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace strata::auth {

struct Credential {
  std::string access_key;
  std::string secret_key;
  bool admin = false;
  // The user the key belongs to; empty: the key is its own user (named as the key).
  std::string user = {};
};

class CredentialStore {
 public:
  virtual ~CredentialStore() = default;
  // The credential for `access_key`, or nullopt when there is none.
  virtual std::optional<Credential> Find(std::string_view access_key) const = 0;
};

// An in-memory store: for tests, and for the bootstrap users of the config.
class MemCredentialStore final : public CredentialStore {
 public:
  void Add(Credential c) { creds_[c.access_key] = std::move(c); }
  std::optional<Credential> Find(std::string_view access_key) const override {
    auto it = creds_.find(std::string(access_key));
    if (it == creds_.end()) {
      return std::nullopt;
    }
    return it->second;
  }

 private:
  std::map<std::string, Credential> creds_;
};

}  // namespace strata::auth
