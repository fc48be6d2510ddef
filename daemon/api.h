/* api.h: the HTTP/JSON API that benchd's server hands every request to. */
#ifndef BD_API_H
#define BD_API_H

#include "daemon.h"
#include "http.h"

/* Routes a request (api.c's table) and fills the response: an
 * http_handler for http_start(). */
void api_handle(struct daemon *d, struct http_request *rq, struct http_response *rs);

#endif
