#include "auth/request.h"

#include "auth/internal/canonical.h"

namespace strata::auth {

std::string_view RequestView::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (internal::IEquals(n, name)) {
      return v;
    }
  }
  return {};
}

bool RequestView::HasHeader(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (internal::IEquals(n, name)) {
      return true;
    }
  }
  return false;
}

}  // namespace strata::auth
