# Fails on a wrong-way include (STYLE.md "Modules", DESIGN.md "Layout and dependency
# direction"). In common <- auth <- metadata <- storage <- gateway <- tools:
#   - a module includes only itself and modules to its left;
#   - a module's subfolders (storage/engine/, auth/internal/, ...) are private to it: another
#     module includes only the headers at the top of its folder;
#   - below gateway/, nothing includes Boost.Beast (HTTP is gateway's) but the upstream S3
#     client's private folder, storage/upstream/ (DESIGN.md: storage owns that client), and
#     storage/cluster/etcd_client.cc, a client of etcd's HTTP (JSON gateway) API as the
#     upstream client is of S3's: membership and the catalog live in etcd (DESIGN.md,
#     "Cluster"). Only that one file: the rest of storage/cluster/ stays free of HTTP;
#   - rocksdb is named only in metadata/.
# -DROOT=<tree> is the tree to check. No exception is tolerated (the last includes of
# storage's private folders from gateway/ and tools/ went with issue 18's tier engine).
# tests/unit/layering_planted/ holds trees with one planted violation each, which must fail
# (tests unit_layering_planted_*).
cmake_minimum_required(VERSION 3.16)
# An absolute root: with a relative one (-DROOT=.) GLOB_RECURSE RELATIVE found no file and
# the check passed having read nothing.
get_filename_component(ROOT "${ROOT}" ABSOLUTE)
set(ORDER common auth metadata storage gateway tools)
set(FAILURES "")
set(CHECKED 0)
list(LENGTH ORDER N)
math(EXPR LAST "${N} - 1")
list(FIND ORDER gateway GATEWAY_INDEX)
foreach(I RANGE ${LAST})
  list(GET ORDER ${I} MODULE)
  file(GLOB_RECURSE FILES RELATIVE ${ROOT} ${ROOT}/${MODULE}/*.h ${ROOT}/${MODULE}/*.cc)
  foreach(F ${FILES})
    math(EXPR CHECKED "${CHECKED} + 1")
    file(STRINGS ${ROOT}/${F} LINES REGEX "^#include")
    foreach(L ${LINES})
      foreach(J RANGE ${LAST})
        list(GET ORDER ${J} OTHER)
        if(J GREATER I AND L MATCHES "^#include \"${OTHER}/")
          list(APPEND FAILURES "${F}: ${L} (${MODULE} may not include ${OTHER})")
        endif()
        if(NOT J EQUAL I AND L MATCHES "^#include \"${OTHER}/[^/\"]+/")
          list(APPEND FAILURES
               "${F}: ${L} (${MODULE} may not include a private header of ${OTHER})")
        endif()
      endforeach()
      if(NOT MODULE STREQUAL "metadata" AND L MATCHES "rocksdb/")
        list(APPEND FAILURES "${F}: ${L} (rocksdb belongs to metadata/)")
      endif()
      if(I LESS GATEWAY_INDEX AND L MATCHES "boost/beast" AND NOT F MATCHES "^storage/upstream/"
       AND NOT F STREQUAL "storage/cluster/etcd_client.cc")
        list(APPEND FAILURES "${F}: ${L} (HTTP belongs to gateway/)")
      endif()
    endforeach()
  endforeach()
endforeach()
if(FAILURES)
  # One unwrapped line each (FATAL_ERROR's text is wrapped), for people and for the
  # planted-tree tests' expressions.
  foreach(F ${FAILURES})
    message(STATUS "layering violation: ${F}")
  endforeach()
  string(REPLACE ";" "\n" MSG "${FAILURES}")
  message(FATAL_ERROR "layering violations:\n${MSG}")
endif()
if(CHECKED EQUAL 0)
  message(FATAL_ERROR "layering check: no source file under ${ROOT}: nothing was checked")
endif()
message(STATUS "layering ok (${CHECKED} files)")
