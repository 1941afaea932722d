#include "gateway/identity.h"

#include "auth/signer.h"

namespace strata::gateway {

std::string_view UserName(const auth::Credential& user) { return user.access_key; }

std::string UserArn(std::string_view user_name) {
  return "arn:aws:iam:::user/" + std::string(user_name);
}

std::string CanonicalUserId(std::string_view user_name) {
  // A thread's callers ask for the same few users over and over: the last one is kept.
  thread_local std::string last_name;
  thread_local std::string last_id;
  if (last_id.empty() || last_name != user_name) {
    last_name = user_name;
    last_id = auth::Sha256Hex("strata canonical user id\n" + last_name);
  }
  return last_id;
}

void WriteOwner(XmlWriter& xml, std::string_view element, std::string_view user_name) {
  xml.Open(element)
      .Element("ID", CanonicalUserId(user_name))
      .Element("DisplayName", user_name)
      .Close();
}

}  // namespace strata::gateway
