// IndexCredentialStore: the users the gateway accepts: the config's bootstrap users
// (immutable) and the ones created through the admin API (in the index).
#pragma once

#include "auth/credential_store.h"
#include "common/config.h"
#include "metadata/index.h"

namespace strata::gateway {

class IndexCredentialStore final : public auth::CredentialStore {
 public:
  IndexCredentialStore(const Config& config, metadata::Index& index);
  std::optional<auth::Credential> Find(std::string_view access_key) const override;
  bool IsBootstrapUser(std::string_view access_key) const;

 private:
  auth::MemCredentialStore bootstrap_;
  metadata::Index& index_;
};

}  // namespace strata::gateway
