// The static binaries' HTTP (nightjar-static, the guests' test binary): no
// libcurl (harness/lava/http.h says why); a guest never talks to a server.
#include "harness/lava/http.h"
#include "results/model/exit_codes.h"

namespace nightjar {

HttpResponse http_request(const HttpRequest& request) {
  throw EnvironmentError(request.method + " " + request.url +
                         ": this statically linked nightjar has no HTTP client; talk to a LAVA "
                         "server with the host's nightjar");
}

}  // namespace nightjar
