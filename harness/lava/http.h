// HTTP for `nightjar lava submit` and `collect` (harness/lava/server.h):
// one request, one response, through libcurl (libcurl4-openssl-dev;
// docs/lava.md "With a server" says why libcurl). http_curl.cpp is the
// object library nightjar_http, linked by the dynamically linked binaries;
// the static guest binaries link http_unavailable.cpp instead (Debian's
// libcurl.a pulls TLS, HTTP/2, SSH and LDAP libraries shipped only as shared
// objects), which refuses with the reason: a guest never talks to a server.
#pragma once

#include <string>
#include <vector>

namespace nightjar {

/// One HTTP request.
struct HttpRequest {
  std::string method = "GET";             ///< GET or POST
  std::string url;                        ///< absolute http:// or https:// URL
  std::vector<std::string> headers = {};  ///< "Name: value" lines
  std::string body = {};                  ///< sent with POST
  long timeout_sec = 120;                 ///< the whole transfer
};

/// An HTTP response.
struct HttpResponse {
  long status = 0;   ///< the HTTP status (200, 201, 404, ...)
  std::string body;  ///< the body, as received
};

/// Performs `request` (redirects followed, TLS verified against the system's
/// CAs, a proxy from the environment as curl takes it). Throws
/// EnvironmentError "METHOD URL: WHAT" when no response came (refused,
/// unresolved host, TLS failure, timeout), naming curl's error; an HTTP
/// error status is a response, not an exception.
HttpResponse http_request(const HttpRequest& request);

}  // namespace nightjar
