// Planted: HTTP below gateway/.
#include <boost/beast/http.hpp>
