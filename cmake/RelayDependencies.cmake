# Every dependency comes from a Debian package (see README "Dependencies"); nothing is fetched.
find_package(Threads REQUIRED)
# hiredict (bookworm-backports): the hiredis API with TLS. hiredict_ssl.pc requires hiredict.pc,
# so this one module brings both libraries and hiredict's -D_FILE_OFFSET_BITS=64.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HIREDICT REQUIRED IMPORTED_TARGET hiredict_ssl)
find_package(OpenSSL REQUIRED)  # src/redis builds its own SSL_CTX (certificate checks, SNI)
add_library(relay_hiredict INTERFACE)
target_link_libraries(relay_hiredict INTERFACE PkgConfig::HIREDICT OpenSSL::SSL OpenSSL::Crypto)
find_package(yaml-cpp REQUIRED CONFIG)
find_package(nlohmann_json REQUIRED CONFIG)
find_package(CLI11 REQUIRED CONFIG)
find_package(fmt REQUIRED CONFIG)
find_package(ZLIB REQUIRED)
find_package(date REQUIRED CONFIG)  # libhowardhinnant-date-dev; zones from tzdata at runtime
# libseccomp-dev: the sandbox's seccomp filter (src/runtime/sandbox/seccomp_filter.cpp).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)
# opentelemetry-cpp (bookworm-backports): the OTLP/HTTP span exporter of src/tracing. Its CMake
# package also demands the gRPC, abseil and protobuf development packages for exporters Relay
# does not use, so the libraries the HTTP exporter needs are found directly.
find_path(RELAY_OTEL_INCLUDE_DIR opentelemetry/exporters/otlp/otlp_http_exporter_factory.h
          REQUIRED)
add_library(relay_opentelemetry INTERFACE)
target_include_directories(relay_opentelemetry SYSTEM INTERFACE ${RELAY_OTEL_INCLUDE_DIR})
foreach(lib exporter_otlp_http exporter_otlp_http_client otlp_recordable http_client_curl trace
            resources common)
  find_library(RELAY_OTEL_${lib} opentelemetry_${lib} REQUIRED)
  target_link_libraries(relay_opentelemetry INTERFACE ${RELAY_OTEL_${lib}})
endforeach()
if(RELAY_BUILD_TESTS)
  find_package(GTest REQUIRED CONFIG)
endif()
if(RELAY_BUILD_TESTS OR RELAY_FUZZ)
  # Only the decoder's tests and fuzz target: an independent validator to agree with.
  find_package(simdjson REQUIRED CONFIG)
endif()
if(RELAY_BUILD_BENCH)
  find_package(benchmark REQUIRED CONFIG)
endif()
