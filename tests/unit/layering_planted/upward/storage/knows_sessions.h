// Planted: storage including gateway, to its right.
#include "gateway/session.h"
