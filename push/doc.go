// Package push is the delivery core of the gateway's push-notification
// relay: the webhook target policy (Policy), the sender that POSTs a
// delivery with bounded retries (Sender), the per-agent queue that orders a
// task's deliveries (Queue), the headers each caller dialect expects
// (Headers), and the agents[].push configuration (Config).
//
// It does not translate: a Delivery's body is already in the caller's
// dialect, and its headers come from Headers. It logs nothing: outcomes go
// to an Observer, and errors name no token or credential (URLs are shown
// without userinfo, query or fragment).
//
// # Delivery guarantees
//
// Deliveries for one task to one URL go out one at a time, in Enqueue order,
// at least once: the next one starts when the previous one was delivered,
// rejected, or given up on. Deliveries of different tasks go out
// concurrently, up to Config.Workers at once. An attempt is retried on a
// connection error, a timeout, 408, 429 and 5xx, after a wait drawn with
// full jitter from an exponential bound (BackoffBase doubled per retry,
// capped at BackoffMax) or the receiver's Retry-After (seconds or HTTP-date,
// capped at BackoffMax); other 4xx, and 3xx (redirects are not followed:
// one could point anywhere), end the delivery as Rejected.
//
// # When the queue is full
//
// Enqueue returns ErrQueueFull at once instead of waiting or evicting;
// EnqueueAll, for a notification fanned out to several webhooks, queues all
// of them or none, so that a backend's retry of a refused one reaches no
// webhook twice. The
// caller, the receiver of the backend's webhook, answers the backend 503:
// the delivery is refused before the backend was told it was accepted, so
// the backend still holds it. A backend that retries delivers it again when
// the queue has room; one that does not (the official senders of @a2a-js/sdk
// and a2a-go log a failed POST and move on) records the loss on its own
// side. Evicting an older delivery instead would silently lose one the
// gateway had already accepted with a 2xx; blocking the receiver would tie
// up the backend's connections while the caller's receiver is slow. The
// refusal is observed as DroppedQueueFull, for a metric and a log line at
// the edge.
//
// # Shutdown
//
// Queue.Close stops accepting (Enqueue returns ErrClosed) and lets the
// queued deliveries go out until its context ends (server.shutdown_timeout
// on SIGTERM); then it cancels the attempts and waits in flight and drops
// what is left, each observed as AbandonedShutdown, and reports how many.
//
// # Target policy
//
// See Policy: http and https only, no userinfo, and by default no loopback,
// private, link-local, unique-local, CGNAT, unspecified, multicast or
// broadcast address, in IPv4, IPv4-mapped IPv6, NAT64 and 6to4 forms,
// checked on the URL when a config is set and on every address dialled.
// Cloud metadata addresses are refused whatever the options say. Proxies
// from the environment are not used, so that the address checked is the
// receiver's. TLS certificates are verified.
package push
