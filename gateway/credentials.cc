#include "gateway/credentials.h"

namespace strata::gateway {

IndexCredentialStore::IndexCredentialStore(const Config& config, metadata::Index& index)
    : index_(index) {
  for (const auto& user : config.users) {
    bootstrap_.Add({user.access_key, user.secret_key, user.admin});
  }
}

std::optional<auth::Credential> IndexCredentialStore::Find(std::string_view access_key) const {
  if (auto found = bootstrap_.Find(access_key)) {
    return found;
  }
  auto user = index_.GetUser(std::string(access_key));
  if (!user.ok()) {
    return std::nullopt;
  }
  return auth::Credential{user->access_key, user->secret_key, user->admin, user->user};
}

bool IndexCredentialStore::IsBootstrapUser(std::string_view access_key) const {
  return bootstrap_.Find(access_key).has_value();
}

}  // namespace strata::gateway
