// Planted violation: only storage/cluster/etcd_client.cc may speak HTTP in storage/cluster/.
#include <boost/beast/http.hpp>
