#include "gateway/identity.h"

#include "auth/signer.h"

namespace strata::gateway {

std::string_view UserName(const auth::Credential& user) {
  return user.user.empty() ? std::string_view(user.access_key) : std::string_view(user.user);
}

std::string UserArn(std::string_view user_name) {
  return "arn:aws:iam:::user/" + std::string(user_name);
}

const UserIds& IdsOf(std::string_view user_name) {
  // A thread's callers ask for the same few users over and over: the last one is kept.
  thread_local UserIds last;
  if (last.canonical_id.empty() || last.name != user_name) {
    last.name = user_name;
    last.arn = UserArn(user_name);
    last.canonical_id = auth::Sha256Hex("strata canonical user id\n" + last.name);
  }
  return last;
}

std::string CanonicalUserId(std::string_view user_name) { return IdsOf(user_name).canonical_id; }

void WriteOwner(XmlWriter& xml, std::string_view element, std::string_view user_name) {
  xml.Open(element)
      .Element("ID", CanonicalUserId(user_name))
      .Element("DisplayName", user_name)
      .Close();
}

}  // namespace strata::gateway
