// Package api is brain's HTTP API (v1): processes, their messages, operator
// controls, their conversation log as JSON pages and as a server-sent event
// stream, recipes, health and readiness. It owns the wire types, the bearer
// token roles and the mapping of the runtime's errors to HTTP statuses, and a
// Go client for the same API (used by the CLI).
//
// It must not know how processes run or where they are stored: everything
// it serves comes through [Backend], which *brain.Node satisfies. The user
// view of a log is conversation.UserView, never a second projection.
//
// A request body is one JSON object, UTF-8 throughout, and a query string
// must decode whole; anything else is a 400 saying where it is wrong.
//
// The event stream carries, beside the log's events, the progress of the
// process's running turns (live.Update, through [Backend.Watch]) as
// "progress" events with no id: ephemeral, never replayed, superseded by
// the durable event that lands later, filtered by the view as the events
// are. progress=0 leaves them out.
//
// Every request is observed: an X-Request-ID on its answer (the client's
// when well-formed), a server span named by its route that continues the
// client's trace, a line in the access log and the HTTP metrics. /readyz
// is 200 while the node takes requests, whether Redis answers or not (the
// routes that need Redis answer 503 meanwhile), and 503 once
// [Server.SetDraining] has been called.
//
// Routes (errors are {"error": {"code", "message"}}):
//
//	POST /v1/processes                    {recipe, input?, metadata?} -> 201 Process
//	GET  /v1/processes?state=&recipe=&parent=&after=&limit=            -> ProcessPage
//	GET  /v1/processes/{id}   (with its pipeline, for a recipe of phases) -> Process
//	DELETE /v1/processes/{id}   (workers too; not mid-turn: 409)       -> DeletedProcess
//	POST /v1/processes/{id}/messages      {content}, Idempotency-Key   -> 202 MessageAccepted
//	                                      (mid-turn, steering.user_messages: reject: 409 busy)
//	POST /v1/processes/{id}/steer         {content}   (operator)       -> 202 MessageAccepted
//	POST /v1/processes/{id}/pause|resume|stop|retry   (operator)       -> Process
//	GET  /v1/processes/{id}/events?view=user|raw&after=&limit=         -> EventPage
//	GET  /v1/processes/{id}/events/stream?view=user|raw&after=&progress=0|1
//	                                      (SSE; Last-Event-ID; progress events, no id)
//	POST /v1/processes/{id}/approvals/{call_id}  {decision, reason?}, Idempotency-Key
//	                                      (by: user calls: the owner too) -> 202 MessageAccepted
//	GET  /v1/approvals                    (a user: her own by: user calls) -> ApprovalList
//	GET  /v1/recipes, GET /v1/recipes/{name}
//	POST /v1/recipes/reload               (admin)
//	GET  /healthz, /readyz, /metrics      (no token)
//	GET  /openapi.json                    (no token) the OpenAPI 3.1 description of
//	                                      all of the above, api/openapi.json
package api
