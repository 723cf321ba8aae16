package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a2agate/gateway/agentcard"
	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/normalize"
)

// maxCardBytes bounds a backend's card.
const maxCardBytes = 1 << 20

// cards holds the backend's card, translated for publishing, and keeps it
// fresh. A failed refresh keeps serving the last good card.
type cards struct {
	mu      sync.RWMutex
	publish agentcard.PublishOptions
	canon   []byte
	v025    []byte
	v03     []byte
	v10     []byte
	hybrid  []byte
	lastErr error
	fetched time.Time
	skills  []string
	// grpcTarget is where the agent's gRPC binding is served (host:port),
	// "" while the gateway serves none for it: see Agent.publishGRPC.
	grpcTarget string
	// noStreaming is set while the card says the backend does not stream
	// (blocking_via_stream then sends plain blocking calls).
	noStreaming atomic.Bool
	// pushCapable is what canon says of push notifications, read once per
	// card rather than on every send the push relay looks at.
	pushCapable bool
	// dialectWarned is the dialect of the card last warned of as not the
	// one the backend is spoken to in ("" when the card agrees).
	dialectWarned atomic.Value
}

// CardPaths are where a backend's public card is looked for, newest first.
var CardPaths = []string{".well-known/agent-card.json", ".well-known/agent.json"}

// FetchCard reads a backend's public card: next to its endpoint URL first,
// then at the root of its origin. ctx bounds the whole read, every URL
// tried: a bound per URL would be paid once per URL by a backend that
// hangs.
func FetchCard(ctx context.Context, client *http.Client, endpoint string) ([]byte, string, error) {
	base, err := url.Parse(endpoint)
	if err != nil {
		return nil, "", err
	}
	var bases []*url.URL
	dir := *base
	if !strings.HasSuffix(dir.Path, "/") {
		dir.Path += "/"
	}
	bases = append(bases, &dir)
	if dir.Path != "/" {
		root := *base
		root.Path = "/"
		bases = append(bases, &root)
	}
	var errs []error
	for _, b := range bases {
		for _, p := range CardPaths {
			target := b.ResolveReference(&url.URL{Path: p}).String()
			card, err := getCard(ctx, client, target)
			if err == nil {
				return card, target, nil
			}
			errs = append(errs, err)
		}
	}
	return nil, "", errors.Join(errs...)
}

func getCard(ctx context.Context, client *http.Client, target string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := ownHostOnly(client, req.URL.Hostname()).Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", target, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", target, res.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxCardBytes+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", target, err)
	}
	if len(body) > maxCardBytes {
		return nil, fmt.Errorf("GET %s: card larger than %d bytes", target, maxCardBytes)
	}
	return body, nil
}

// ownHostOnly is client following redirects within host alone, on its
// port (or up to https on 443), and from https to https only. A card
// redirected to another host would publish what that host answers (an
// internal service's JSON, say) as the agent's card.
func ownHostOnly(client *http.Client, host string) *http.Client {
	c := *client
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Hostname() != host {
			return fmt.Errorf("the card redirects to another host, %s: the gateway reads a backend's card from the backend's own host only", req.URL.Redacted())
		}
		prev := via[len(via)-1].URL
		if prev.Scheme == "https" && req.URL.Scheme != "https" {
			// Anyone on the path could rewrite the card from there on.
			return fmt.Errorf("the card redirects from https to plain http, %s: the gateway does not follow it", req.URL.Redacted())
		}
		if port := portOf(req.URL); port != portOf(prev) && !(req.URL.Scheme == "https" && port == "443") {
			// Another port of the host is another service (on a sidecar's
			// loopback, any local one); an upgrade to https is not.
			return fmt.Errorf("the card redirects to another port of the host, %s: the gateway reads a backend's card from the backend's own origin only", req.URL.Redacted())
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("the card redirects more than 10 times")
		}
		return nil
	}
	return &c
}

// portOf is u's port, the scheme's default when it names none.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// ResolveDialect reads a backend's card to tell its dialect, for
// "dialect: auto". It fails when the card cannot be read or understood, so
// a misconfigured gateway stops at start, not at the first request. ctx
// bounds the read, as FetchCard's.
func ResolveDialect(ctx context.Context, cfg BackendConfig) (dialect.Version, string, error) {
	client := &http.Client{Transport: newTransport(cfg)}
	card, where, err := FetchCard(ctx, client, cfg.URL)
	if err != nil {
		return "", "", fmt.Errorf("dialect auto: reading the backend's card failed: %w", err)
	}
	v, reason, err := agentcard.Dialect(card)
	if err != nil {
		return "", "", fmt.Errorf("dialect auto: the card at %s: %w", where, err)
	}
	return v, fmt.Sprintf("%s (card at %s)", reason, where), nil
}

// warnDialectChanged says, once per change, that the backend's card names
// another dialect than the one "auto" chose from it at start: the gateway
// goes on speaking the one it chose (a backend upgraded in place may then
// fail every call), until a reload or restart reads the card again.
func (a *Agent) warnDialectChanged(raw []byte, where string) {
	b := a.backend
	if b.cfg.Dialect != dialect.VersionAuto {
		return
	}
	v, _, err := agentcard.Dialect(raw)
	if err != nil || v == b.version {
		a.cards.dialectWarned.Store(dialect.Version(""))
		return
	}
	if a.cards.dialectWarned.Swap(v) == v {
		return
	}
	a.log.Warn("the backend's card now names another dialect than the one chosen from it at start; the gateway goes on speaking the one it chose: reload the config (SIGHUP) or restart to follow the card",
		"card", where, "speaking", string(b.version), "card_dialect", string(v))
}

func (a *Agent) cardPublish() agentcard.PublishOptions {
	cc := a.cfg.Card
	a.cards.mu.RLock()
	grpcTarget := a.cards.grpcTarget
	a.cards.mu.RUnlock()
	p := agentcard.PublishOptions{
		URL:      a.cfg.PublicURL,
		Bindings: a.cfg.PublishedBindings(),
		GRPCURL:  grpcTarget,
		Overrides: agentcard.Overrides{
			Name: cc.Name, Description: cc.Description, IconURL: cc.IconURL, DocumentationURL: cc.DocumentationURL,
		},
	}
	if cc.Provider != nil {
		p.Overrides.Provider = &agentcard.Provider{Organization: cc.Provider.Organization, URL: cc.Provider.URL}
	}
	if len(cc.Skills) > 0 {
		p.Overrides.Skills, _ = json.Marshal(cc.Skills) // plain strings: cannot fail
	}
	return p
}

// publishGRPC records that the gateway serves the agent's gRPC binding at
// target (host:port), or at none when target is "", and renders the cards
// again if they are already rendered, so they list it.
func (a *Agent) publishGRPC(target string) error {
	c := &a.cards
	c.mu.Lock()
	c.grpcTarget = target
	p, canon := c.publish, c.canon
	c.mu.Unlock()
	p.GRPCURL = target
	if canon == nil {
		return nil
	}
	return c.set(canon, p)
}

// grpcTarget is the gRPC target of a public URL: its host and port, the
// scheme's default port when it names none.
func grpcTarget(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil || u.Host == "" {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// RefreshCard fetches the backend's card and renders it in every published
// form, within card.fetch_timeout (the routed skills' cards included). On
// failure the previous card stays in service.
func (a *Agent) RefreshCard(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.Card.FetchTimeout)
	defer cancel()
	raw, where, err := FetchCard(ctx, a.backend.client, a.backend.url)
	p := a.cardPublish()
	if err == nil && len(a.routes) > 0 && p.Overrides.Skills == nil {
		p.Overrides.Skills, err = a.routedSkills(ctx, raw)
	}
	if err == nil {
		err = a.cards.set(raw, p)
		a.warnNoStreaming()
		if err == nil {
			a.warnDialectChanged(raw, where)
		}
		if err == nil && agentcard.HasSignatures(raw) {
			a.log.Warn("the backend's card is signed; the published card is rewritten with the gateway's URLs and carries no signatures", "card", where)
		}
		if err == nil {
			if canon, cerr := agentcard.ToCanonical(raw); cerr == nil {
				if unsafe := agentcard.UnsafeURLs(canon); len(unsafe) > 0 {
					a.log.Warn("the backend's card has URL fields that are not http or https URLs; they are not published", "card", where, "fields", unsafe)
				}
			}
		}
	}
	a.cards.mu.Lock()
	a.cards.lastErr = err
	a.cards.mu.Unlock()
	a.metrics.cardRefresh(a.cfg.Name, err)
	if err != nil {
		a.log.Warn("refreshing the backend's card failed; serving the last good card", "error", err)
	}
	return err
}

func (c *cards) set(raw []byte, p agentcard.PublishOptions) error {
	canon, err := agentcard.ToCanonical(raw)
	if err != nil {
		return err
	}
	p.ExtendedCard = extendedCardCapable(canon)
	forms := make([][]byte, 4)
	for i, render := range []func([]byte, agentcard.PublishOptions) ([]byte, error){agentcard.V025, agentcard.V03, agentcard.V10, agentcard.Hybrid} {
		if forms[i], err = render(canon, p); err != nil {
			return err
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.publish, c.canon = p, canon
	c.pushCapable = agentcard.PushNotificationsCapable(canon)
	c.noStreaming.Store(!agentcard.StreamingCapable(canon))
	c.v025, c.v03, c.v10, c.hybrid = forms[0], forms[1], forms[2], forms[3]
	c.skills = skillIDsOf(forms[2])
	c.fetched = time.Now()
	return nil
}

func extendedCardCapable(canon []byte) bool {
	return agentcard.ExtendedCardCapable(canon)
}

// CardStatus reports whether a card is being served and the last refresh error.
func (a *Agent) CardStatus() (ready bool, lastErr error) {
	a.cards.mu.RLock()
	defer a.cards.mu.RUnlock()
	return a.cards.canon != nil, a.cards.lastErr
}

// RunCardRefresh keeps the card fresh until ctx ends: every RefreshInterval,
// and, while the backend's card cannot be read (a sidecar gateway often
// starts before its agent), again after 1s, 2s, 4s... up to that interval,
// so readiness follows the backend within seconds.
func (a *Agent) RunCardRefresh(ctx context.Context) {
	const firstRetry = time.Second
	retry := firstRetry
	for {
		wait := a.cfg.Card.RefreshInterval
		if _, err := a.CardStatus(); err != nil {
			wait = min(retry, wait)
			retry *= 2
		} else {
			retry = firstRetry
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
			_ = a.RefreshCard(ctx)
		}
	}
}

func (a *Agent) serveCardForm(w http.ResponseWriter, pick func(*cards) []byte) {
	a.cards.mu.RLock()
	body := pick(&a.cards)
	a.cards.mu.RUnlock()
	w.Header().Set("Vary", dialect.HeaderVersion)
	if body == nil {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "the agent card is not available yet: the backend's card could not be read", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=60")
	_, _ = w.Write(body)
}

// ServeCardV025 serves /.well-known/agent.json, where 0.2.5 clients look.
func (a *Agent) ServeCardV025(w http.ResponseWriter, r *http.Request) {
	a.serveCardForm(w, func(c *cards) []byte { return c.v025 })
}

// ServeCard serves /.well-known/agent-card.json: the card for the version the
// client names in A2A-Version (header or query parameter), or, without one, a card that 0.3 and 1.0
// clients both accept.
func (a *Agent) ServeCard(w http.ResponseWriter, r *http.Request) {
	v := requestVersion(r)
	a.serveCardForm(w, func(c *cards) []byte {
		switch {
		case strings.HasPrefix(v, "1."):
			return c.v10
		case strings.HasPrefix(v, "0."):
			return c.v03
		}
		return c.hybrid
	})
}

// ServeExtendedCardHTTP serves the 0.2.5 extended card, a plain GET.
func (a *Agent) ServeExtendedCardHTTP(w http.ResponseWriter, r *http.Request) {
	c := &call{start: time.Now(), backend: a.backend}
	c.env.Dialect, c.env.Op = dialect.V03, dialect.GetExtendedCard
	defer a.logCall(r.Context(), c)
	if refused := a.checkAuth(r, w.Header(), c); refused != nil {
		a.refuse(w, c, refused)
		return
	}
	params, _, _ := normalize.AppendParams(nil, &c.env, c.backend.dialect) // a GET has none to refuse
	card, e := a.extendedCard(r, c, agentcard.V025, params)
	if e != nil {
		status := http.StatusBadGateway
		if e.Kind == dialect.ErrExtendedCardNotConfigured {
			status = http.StatusNotFound
		}
		c.code, c.reason = e.Kind.Error().Code, e.Kind.Error().Reason
		http.Error(w, e.Error(), status)
		return
	}
	c.bytes = len(card)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(card)
}

// serveExtendedCardRPC answers GetExtendedAgentCard and
// agent/getAuthenticatedExtendedCard.
func (a *Agent) serveExtendedCardRPC(w http.ResponseWriter, r *http.Request, c *call) {
	render := agentcard.V10
	if c.env.Dialect == dialect.V03 {
		render = agentcard.V03
	}
	// Read as every call's params are: a tenant is the backend's to
	// route by, and one the gateway did not pass on would get the
	// default tenant's card.
	params, info, err := normalize.AppendParams(nil, &c.env, c.backend.dialect)
	if err != nil {
		a.fail(w, c, normalize.AsError(err, dialect.ErrInvalidParams))
		return
	}
	c.info = info
	card, e := a.extendedCard(r, c, render, params)
	if e != nil {
		a.fail(w, c, e)
		return
	}
	out := normalize.AppendResultResponse(nil, c.env.ID, card)
	c.bytes += len(out)
	writeJSON(w, http.StatusOK, out)
}

// extendedCard fetches the backend's extended card the way its dialect
// serves it, with params in its dialect, and renders it for publishing.
func (a *Agent) extendedCard(r *http.Request, c *call, render func([]byte, agentcard.PublishOptions) ([]byte, error), params []byte) ([]byte, *normalize.Error) {
	a.cards.mu.RLock()
	p, ready := a.cards.publish, a.cards.canon != nil
	a.cards.mu.RUnlock()
	if ready && !p.ExtendedCard {
		return nil, normalize.Errorf(dialect.ErrExtendedCardNotConfigured, "this agent has no extended card")
	}
	b := c.backend
	var raw []byte
	if b.version == dialect.Version025 {
		target, err := url.JoinPath(b.url, "../agent/authenticatedExtendedCard")
		if err != nil {
			return nil, normalize.Errorf(dialect.ErrInternal, "backend %q has no extended card URL", b.name)
		}
		// A plain GET, not post: its reply is bounded here as post bounds
		// every unary reply.
		ctx, cancel := context.WithTimeoutCause(r.Context(), b.cfg.ResponseTimeout, b.timeoutCause)
		defer cancel()
		res, err := b.get(ctx, r, target)
		if err != nil {
			return nil, b.transportError(ctx, err)
		}
		defer res.Body.Close()
		if res.StatusCode == http.StatusNotFound {
			return nil, normalize.Errorf(dialect.ErrExtendedCardNotConfigured, "this agent has no extended card")
		}
		if res.StatusCode != http.StatusOK {
			return nil, normalize.Errorf(dialect.ErrInternal, "backend %q answered HTTP %d for its extended card", b.name, res.StatusCode)
		}
		if raw, err = io.ReadAll(io.LimitReader(res.Body, maxCardBytes+1)); err != nil {
			return nil, b.transportError(ctx, err)
		}
		if len(raw) > maxCardBytes {
			return nil, normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q sent an extended card larger than %d bytes", b.name, maxCardBytes)
		}
	} else {
		method, _ := dialect.MethodName(b.dialect, dialect.GetExtendedCard)
		res, err := b.post(r.Context(), r, c, method, params, false)
		defer c.endReply() // after the body's Close
		if err != nil {
			return nil, b.transportError(r.Context(), err)
		}
		defer res.Body.Close()
		reply, e := a.readReply(res, b, c)
		if e != nil {
			return nil, e
		}
		if reply.Error != nil {
			return nil, a.backendError(c, reply.Error)
		}
		// Bounded as every card is, not by the larger max_reply_bytes: it
		// is parsed and rendered on every call that asks for it.
		if len(reply.Result) > maxCardBytes {
			return nil, normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q sent an extended card larger than %d bytes", b.name, maxCardBytes)
		}
		raw = reply.Result
	}
	canon, err := agentcard.ToCanonical(raw)
	if err != nil {
		return nil, normalize.Errorf(dialect.ErrInvalidAgentResponse, "backend %q sent an extended card that is not a valid agent card: %v", b.name, err)
	}
	p.ExtendedCard = true
	out, err := render(canon, p)
	if err != nil {
		return nil, normalize.AsError(err, dialect.ErrInternal)
	}
	return out, nil
}

// routedSkills lists the skills of the agent's own card followed by the
// routed skills, each taken from its backend's card, so the published card
// offers all of them.
func (a *Agent) routedSkills(ctx context.Context, own []byte) ([]byte, error) {
	canon, err := agentcard.ToCanonical(own)
	if err != nil {
		return nil, err
	}
	var skills []agentcard.Skill
	for _, s := range agentcard.Skills(canon) {
		if a.routes[s.ID] == nil {
			skills = append(skills, s)
		}
	}
	for _, r := range a.cfg.Skills.Routes {
		b := a.routes[r.Skill]
		raw, _, err := FetchCard(ctx, b.client, b.url)
		if err != nil {
			return nil, fmt.Errorf("skill %q: %w", r.Skill, err)
		}
		c, err := agentcard.ToCanonical(raw)
		if err != nil {
			return nil, fmt.Errorf("skill %q: %w", r.Skill, err)
		}
		i := slices.IndexFunc(agentcard.Skills(c), func(s agentcard.Skill) bool { return s.ID == r.Skill })
		if i < 0 {
			return nil, fmt.Errorf("skill %q is not on the card of the backend it is routed to", r.Skill)
		}
		skills = append(skills, agentcard.Skills(c)[i])
	}
	return agentcard.AppendSkillList(nil, skills), nil
}
