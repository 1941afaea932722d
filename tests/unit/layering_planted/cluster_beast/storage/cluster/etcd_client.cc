// Allowed: etcd's JSON gateway client (tests/unit/check_layering.cmake).
#include <boost/beast/http.hpp>
