// Package agentcard translates A2A agent cards. A backend's card (0.2.5, 0.3, 1.0,
// or one of the hybrid shapes the SDKs
// emit) is read once into the canonical 1.0 ProtoJSON card (ToCanonical),
// and every card the gateway publishes is rendered from that canonical card
// (V025, V03, V10, Hybrid). Readers accept both dialects'
// spellings everywhere, and the snake_case field names ProtoJSON parsers must
// also accept; writers emit exactly the keys the target dialect defines, in a
// fixed order, so output is byte-stable for a given input.
//
// Security schemes. 0.x describes a scheme as an OpenAPI object with a "type"
// discriminator ({"type":"http","scheme":"bearer"}); 1.0 wraps it in a oneof
// ({"httpAuthSecurityScheme":{"scheme":"bearer"}}), under the same key
// "securitySchemes". The hybrid card writes both in one object per scheme
// ({"type":"http","scheme":"bearer","httpAuthSecurityScheme":{...}}), which
// every SDK parser we checked accepts:
//   - a2a-go v0.3 dispatches on "type" and encoding/json ignores the wrapper;
//   - a2a-python 0.3 (pydantic, extra keys ignored) validates the typed union;
//   - a2a-go 1.0 reads only the wrapper keys; its a2av0 compat parser, like
//     a2a-python 1.0's parse_agent_card, prefers "type" and ignores the rest;
//   - @a2a-js/sdk 0.3 does not validate; 1.0 sees "type" and uses the card as
//     plain JSON, as it does for every Python 1.0 card.
//
// a2a-python 1.0 itself serves the 0.3 shape only (agent_card_to_dict), which
// a2a-go 1.0 rejects ("unknown security scheme"); the JS 1.0 SDK serves two
// cards chosen by the A2A-Version header. Serving per-version cards remains the
// cleanest option, hence V03 and V10 beside Hybrid.
//
// Cards are not on the hot path (read once per backend, rendered once per
// change), so this package is separate from the message translator.
package agentcard

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

// errInvalid reports an agent card that cannot be translated: not a JSON
// object, without a name, or (for Dialect) without an interface the
// gateway can speak to.
var errInvalid = errors.New("invalid agent card")

// PublishOptions says how the gateway publishes a backend's card.
type PublishOptions struct {
	// URL is the gateway's public URL for this agent: the URL of its
	// JSON-RPC and HTTP+JSON interfaces (the SDKs' REST clients append the
	// routes to it). No backend URL survives.
	URL string
	// Bindings are the bindings the gateway serves for this agent, listed
	// on the card always in the order of dialect.Bindings whatever their
	// order here, so that each SDK's default client picks JSON-RPC, as in
	// front of a native JSON-RPC agent. Empty means JSON-RPC only.
	Bindings []dialect.Binding
	// GRPCURL is the gRPC target (host:port, which the SDKs' gRPC clients
	// dial) of the agent's gRPC binding; without one, GRPC is not listed.
	GRPCURL string
	// Bearer, when true, makes the card's security describe what the gateway
	// enforces: one HTTP bearer scheme named "bearer" with bearerFormat "JWT",
	// required for every call. When false the card carries no security at all.
	// The backend's own schemes are never published: the gateway does not
	// enforce them.
	Bearer bool
	// ExtendedCard says whether the gateway serves an extended card.
	ExtendedCard bool
	// Overrides replace fields of the backend's card.
	Overrides Overrides
}

// Overrides are fields the platform team sets in the gateway's config;
// each one that is set replaces the backend's value.
type Overrides struct {
	// Name, Description, IconURL and DocumentationURL replace the backend's
	// value when non-empty.
	Name, Description, IconURL, DocumentationURL string
	// Provider replaces the backend's provider when non-nil; one with both
	// fields empty removes it.
	Provider *Provider
	// Skills is a raw JSON array of 1.0 skills; when non-nil it replaces the
	// backend's list.
	Skills []byte
}

// Provider is the organization that publishes an agent.
type Provider struct {
	Organization, URL string
}

// HasSignatures reports whether card carries JWS signatures. Translation
// always drops them: a rewritten card no longer matches what was signed, so
// the caller should log that they were dropped.
func HasSignatures(card []byte) bool {
	if !jsonscan.Valid(card) {
		return false
	}
	return hasElements(gjson.GetBytes(card, "signatures"))
}

// Dialect reports which JSON-RPC dialect the agent behind card speaks,
// with a sentence for the log explaining why.
//
// The card's interfaces are read as a 1.0 client reads them: supportedInterfaces
// when present, otherwise url and preferredTransport (default JSONRPC) plus
// additionalInterfaces, all at the top-level protocolVersion. A JSONRPC
// interface at 1.0 or 1.0.x wins (dialect.Version10); otherwise the first
// JSONRPC interface at 0.2.x is dialect.Version025 and at 0.3.x
// dialect.Version03. A 0.x card without protocolVersion is taken as 0.3, the
// default of the 0.3 schema and of the 1.0 SDKs' card parsers. A card with no
// JSONRPC interface at one of those versions is an error.
func Dialect(card []byte) (v dialect.Version, reason string, err error) {
	root, err := parseCard(card)
	if err != nil {
		return "", "", err
	}
	ifaces, from := interfacesOf(root)
	return dialectOf(ifaces, from)
}

// ToCanonical translates a backend's agent card of any dialect into the
// canonical 1.0 ProtoJSON card. Keys 1.0 does not define are dropped, among
// them signatures (see HasSignatures) and stateTransitionHistory. An
// OAuth2 scheme listing several flows keeps the first of authorizationCode,
// clientCredentials, implicit, password (the order of @a2a-js/sdk; 1.0 allows
// one flow). A card nested deeper than maxCardDepth is refused, and a lone
// UTF-16 surrogate escape becomes U+FFFD (wellFormed). The result is
// stable: translating it again returns it unchanged.
func ToCanonical(card []byte) ([]byte, error) {
	card, err := wellFormed(card)
	if err != nil {
		return nil, err
	}
	root, err := parseCard(card)
	if err != nil {
		return nil, err
	}
	name := field(root, "name")
	if !nonEmptyString(name) {
		return nil, fmt.Errorf("%w: name is missing or not a non-empty string", errInvalid)
	}
	ifaces, _ := interfacesOf(root)
	caps := field(root, "capabilities")
	if err := extensionParamsUnique(field(caps, "extensions")); err != nil {
		return nil, err
	}
	extended := field(caps, "extendedAgentCard")
	if !isBool(extended) {
		extended = field(root, "supportsAuthenticatedExtendedCard")
	}

	o := openWriter(make([]byte, 0, len(card)), '{')
	o.raw("name", name.Raw)
	o.raw("description", stringOr(field(root, "description"), `""`))
	o.key("supportedInterfaces")
	o.buf = appendInterfaces(o.buf, ifaces)
	if p := field(root, "provider"); providerPresent(p) {
		o.key("provider")
		o.buf = appendProvider(o.buf, p)
	}
	o.raw("version", stringOr(field(root, "version"), `""`))
	o.optionalString("documentationUrl", field(root, "documentationUrl"))
	o.key("capabilities")
	o.buf = appendCapabilities(o.buf, caps, extended, formV10)
	o.securitySchemes(field(root, "securitySchemes"), formV10)
	o.requirements("securityRequirements", requirementsOf(root), true)
	o.optionalStrings("defaultInputModes", field(root, "defaultInputModes"))
	o.optionalStrings("defaultOutputModes", field(root, "defaultOutputModes"))
	o.optionalSkills(field(root, "skills"), true)
	o.optionalString("iconUrl", field(root, "iconUrl"))
	return o.close(), nil
}

// V025 renders the canonical card as an A2A 0.2.5 card, as served at
// /.well-known/agent.json: protocolVersion "0.2.5", url and preferredTransport
// of the first binding served (JSON-RPC unless it is not published; 0.2.5
// has no additionalInterfaces), 0.x security, supportsAuthenticatedExtendedCard. 0.2.5 has no
// mutualTLS scheme, no oauth2MetadataUrl and no per-skill security.
func V025(canon []byte, p PublishOptions) ([]byte, error) {
	return renderForm(canon, p, formV025)
}

// V03 renders the canonical card as a pure A2A 0.3 card: protocolVersion
// "0.3.0", url and preferredTransport of the first binding served,
// additionalInterfaces listing every binding served (the main one repeated,
// as the 0.3 schema recommends), 0.x security,
// supportsAuthenticatedExtendedCard.
func V03(canon []byte, p PublishOptions) ([]byte, error) {
	return renderForm(canon, p, formV03)
}

// V10 renders the canonical card as a pure A2A 1.0 card: supportedInterfaces
// lists every binding served at 1.0 only (a 0.3 client asks for the 0.3 or
// the hybrid card), capabilities.extendedAgentCard, 1.0 security.
func V10(canon []byte, p PublishOptions) ([]byte, error) {
	return renderForm(canon, p, formV10)
}

// Hybrid renders the canonical card for /.well-known/agent-card.json as
// one document that 0.3 and 1.0 clients both accept: every V10 field, with
// supportedInterfaces listing every binding served at 1.0 then at 0.3 (the
// gateway serves both dialects at each interface), plus
// the 0.3 fields url, preferredTransport, protocolVersion "0.3.0",
// additionalInterfaces as V03 writes them, supportsAuthenticatedExtendedCard and security. Each
// security scheme carries both spellings (see the comment at the top of this
// file). Prefer V03 or V10 when the request's A2A-Version header
// names a version.
func Hybrid(canon []byte, p PublishOptions) ([]byte, error) {
	return renderForm(canon, p, formHybrid)
}

// form is a card spelling the writers produce.
type form uint8

const (
	formV025 form = iota + 1
	formV03
	formV10
	formHybrid
)

// Values the writers emit.
var (
	jsonrpcTransport = gjson.Parse(`"JSONRPC"`)
	default03        = gjson.Parse(`"0.3"`) // protocolVersion assumed for a 0.x card without one
	jsonTrue         = gjson.Parse(`true`)
	// The only security the gateway publishes: the bearer JWT it verifies.
	bearerSchemes      = gjson.Parse(`{"bearer":{"httpAuthSecurityScheme":{"scheme":"bearer","bearerFormat":"JWT"}}}`)
	bearerRequirements = gjson.Parse(`[{"schemes":{"bearer":{"list":[]}}}]`)
)

// parseCard validates card once and returns its root object.
func parseCard(card []byte) (gjson.Result, error) {
	// jsonscan, not gjson's validator, which recurses once a bracket: a
	// card of a megabyte of '[' would take a goroutine stack of hundreds
	// of MiB at each refresh.
	if !jsonscan.DepthOK(card) {
		return gjson.Result{}, fmt.Errorf("%w: nests deeper than %d levels", errInvalid, jsonscan.MaxDepth)
	}
	if !jsonscan.Valid(card) {
		return gjson.Result{}, fmt.Errorf("%w: not valid JSON", errInvalid)
	}
	if !utf8.Valid(card) {
		// JSON is UTF-8 (RFC 8259): a client's parser would replace such
		// bytes or refuse the card, so it would read another card than ours.
		return gjson.Result{}, fmt.Errorf("%w: not valid UTF-8", errInvalid)
	}
	root := gjson.ParseBytes(card)
	if !root.IsObject() {
		return gjson.Result{}, fmt.Errorf("%w: not a JSON object", errInvalid)
	}
	return root, nil
}

// --- interfaces and dialect detection

// cardInterface is one interface of a card, as raw JSON strings.
type cardInterface struct {
	url, binding, tenant, version gjson.Result
}

// interfaceSource says where a card's interfaces came from and explains them.
type interfaceSource uint8

const (
	fromSupportedInterfaces interfaceSource = iota + 1
	fromURL                                 // url + additionalInterfaces at the top-level protocolVersion
	fromURLDefaulted                        // the same, without a protocolVersion
)

// interfacesOf lists root's interfaces the way the 1.0 SDKs' card parsers
// do: supportedInterfaces wins when it has any entry, and the 0.x fields are
// then ignored (a2a-python parse_agent_card, a2a-go a2av0, a2a-js).
func interfacesOf(root gjson.Result) ([]cardInterface, interfaceSource) {
	if si := field(root, "supportedInterfaces"); hasElements(si) {
		var list []cardInterface
		si.ForEach(func(_, e gjson.Result) bool {
			it := cardInterface{url: field(e, "url"), binding: field(e, "protocolBinding")}
			if !nonEmptyString(it.url) || !nonEmptyString(it.binding) {
				return true
			}
			if t := field(e, "tenant"); nonEmptyString(t) {
				it.tenant = t
			}
			if v := field(e, "protocolVersion"); nonEmptyString(v) {
				it.version = v
			}
			list = append(list, it)
			return true
		})
		return list, fromSupportedInterfaces
	}
	primary := field(root, "url")
	if !nonEmptyString(primary) {
		return nil, fromURL
	}
	source := fromURL
	version := field(root, "protocolVersion")
	if !nonEmptyString(version) {
		version, source = default03, fromURLDefaulted
	}
	binding := field(root, "preferredTransport")
	if !nonEmptyString(binding) {
		binding = jsonrpcTransport
	}
	list := []cardInterface{{url: primary, binding: binding, version: version}}
	field(root, "additionalInterfaces").ForEach(func(_, e gjson.Result) bool {
		u, t := field(e, "url"), field(e, "transport")
		if !nonEmptyString(u) || !nonEmptyString(t) {
			return true
		}
		for _, it := range list {
			if it.url.Str == u.Str && it.binding.Str == t.Str {
				return true // 0.3 asks cards to repeat the main url here
			}
		}
		list = append(list, cardInterface{url: u, binding: t, version: version})
		return true
	})
	return list, source
}

func dialectOf(ifaces []cardInterface, from interfaceSource) (dialect.Version, string, error) {
	if len(ifaces) == 0 {
		return "", "", fmt.Errorf("%w: no interface: supportedInterfaces is empty and url is missing", errInvalid)
	}
	// Card text is quoted: the reason goes to the log.
	explain := func(it cardInterface, v dialect.Version) (dialect.Version, string, error) {
		var reason string
		switch from {
		case fromSupportedInterfaces:
			reason = fmt.Sprintf("supportedInterfaces lists JSONRPC %q at %q", it.version.Str, it.url.Str)
		case fromURLDefaulted:
			reason = fmt.Sprintf("the card has no protocolVersion, so 0.3 (the 0.3 schema default) is assumed for JSONRPC at %q", it.url.Str)
		default:
			reason = fmt.Sprintf("protocolVersion %q with JSONRPC at %q", it.version.Str, it.url.Str)
		}
		if it.tenant.Exists() {
			reason += fmt.Sprintf(" for tenant %q", it.tenant.Str)
		}
		return v, reason, nil
	}
	for _, it := range ifaces {
		if it.binding.Str == "JSONRPC" && versionIs(it.version.Str, "1", "0") {
			return explain(it, dialect.Version10)
		}
	}
	for _, it := range ifaces {
		if it.binding.Str != "JSONRPC" {
			continue
		}
		switch {
		case versionIs(it.version.Str, "0", "3"):
			return explain(it, dialect.Version03)
		case versionIs(it.version.Str, "0", "2"):
			return explain(it, dialect.Version025)
		}
	}
	first := ifaces[0]
	return "", "", fmt.Errorf("%w: no JSONRPC interface at 0.2, 0.3 or 1.0 (first interface: %q %q at %q)",
		errInvalid, first.binding.Str, first.version.Str, first.url.Str)
}

// versionIs reports whether v is major.minor, optionally followed by
// .patch, as "1.0", "1.0.1" or "0.3.0".
func versionIs(v, major, minor string) bool {
	rest, ok := strings.CutPrefix(v, major+"."+minor)
	return ok && (rest == "" || len(rest) > 1 && rest[0] == '.')
}

func appendInterfaces(dst []byte, ifaces []cardInterface) []byte {
	a := openWriter(dst, '[')
	for _, it := range ifaces {
		a.elem()
		o := openWriter(a.buf, '{')
		o.raw("url", it.url.Raw)
		o.raw("protocolBinding", it.binding.Raw)
		if it.tenant.Exists() {
			o.raw("tenant", it.tenant.Raw)
		}
		if it.version.Exists() {
			o.raw("protocolVersion", it.version.Raw)
		}
		a.buf = o.close()
	}
	return a.close()
}

// --- card fields shared by all dialects

func providerPresent(p gjson.Result) bool {
	return nonEmptyString(field(p, "organization")) || nonEmptyString(field(p, "url"))
}

// appendProvider writes both provider fields: every schema requires both,
// and a2a-python 0.3 rejects a provider without either.
func appendProvider(dst []byte, p gjson.Result) []byte {
	o := openWriter(dst, '{')
	o.raw("organization", stringOr(field(p, "organization"), `""`))
	o.raw("url", stringOr(field(p, "url"), `""`))
	return o.close()
}

// appendCapabilities writes caps in form f. extended is the extended-card
// flag (a JSON bool, or absent); 0.x keeps it at the card's top level.
// stateTransitionHistory has no 1.0 spelling and is dropped.
func appendCapabilities(dst []byte, caps, extended gjson.Result, f form) []byte {
	o := openWriter(dst, '{')
	o.optionalBool("streaming", field(caps, "streaming"))
	o.optionalBool("pushNotifications", field(caps, "pushNotifications"))
	if ext := field(caps, "extensions"); hasElements(ext) {
		m := o.mark()
		o.key("extensions")
		var n int
		o.buf, n = appendExtensions(o.buf, ext, f == formV10)
		if n == 0 {
			o.rollback(m)
		}
	}
	if f == formV10 || f == formHybrid {
		o.optionalBool("extendedAgentCard", extended)
	}
	return o.close()
}

// appendExtensions writes the extensions with a uri; protoJSON leaves a
// false "required" out, as ProtoJSON does.
func appendExtensions(dst []byte, exts gjson.Result, protoJSON bool) ([]byte, int) {
	a := openWriter(dst, '[')
	n := 0
	exts.ForEach(func(_, e gjson.Result) bool {
		uri := field(e, "uri")
		if !nonEmptyString(uri) {
			return true
		}
		a.elem()
		o := openWriter(a.buf, '{')
		o.raw("uri", uri.Raw)
		o.optionalString("description", field(e, "description"))
		if r := field(e, "required"); !protoJSON || r.Type == gjson.True {
			o.optionalBool("required", r)
		}
		if params := field(e, "params"); params.IsObject() {
			o.raw("params", params.Raw)
		}
		a.buf = o.close()
		n++
		return true
	})
	return a.close(), n
}

// optionalSkills writes skills as the 1.0 and canonical cards carry them:
// as ProtoJSON writes them, so neither an empty list nor empty tags.
func (w *writer) optionalSkills(skills gjson.Result, withRequirements bool) {
	m := w.mark()
	w.key("skills")
	before := len(w.buf)
	w.buf = appendSkills(w.buf, skills, withRequirements, true)
	if len(w.buf)-before == len("[]") {
		w.rollback(m)
	}
}

// appendSkills writes the skill objects of skills. Skill keys are the
// same in every dialect but for security; withRequirements keeps it, in 1.0
// form. protoJSON leaves empty tags out; 0.x requires them.
func appendSkills(dst []byte, skills gjson.Result, withRequirements, protoJSON bool) []byte {
	a := openWriter(dst, '[')
	skills.ForEach(func(_, s gjson.Result) bool {
		if !s.IsObject() {
			return true
		}
		a.elem()
		o := openWriter(a.buf, '{')
		o.raw("id", stringOr(field(s, "id"), `""`))
		o.raw("name", stringOr(field(s, "name"), `""`))
		o.raw("description", stringOr(field(s, "description"), `""`))
		if protoJSON {
			o.optionalStrings("tags", field(s, "tags"))
		} else {
			o.key("tags")
			o.buf = appendStrings(o.buf, field(s, "tags"))
		}
		o.optionalStrings("examples", field(s, "examples"))
		o.optionalStrings("inputModes", field(s, "inputModes"))
		o.optionalStrings("outputModes", field(s, "outputModes"))
		if withRequirements {
			o.requirements("securityRequirements", requirementsOf(s), true)
		}
		a.buf = o.close()
		return true
	})
	return a.close()
}

// appendStrings writes the string elements of arr, dropping the rest.
func appendStrings(dst []byte, arr gjson.Result) []byte {
	a := openWriter(dst, '[')
	arr.ForEach(func(_, v gjson.Result) bool {
		if v.Type == gjson.String {
			a.elem()
			a.buf = append(a.buf, v.Raw...)
		}
		return true
	})
	return a.close()
}

// --- security requirements

// requirementsOf returns obj's security requirements: the 1.0 key when
// it lists any, else the 0.x key (a2a-python and a2a-go resolve hybrid cards
// the same way).
func requirementsOf(obj gjson.Result) gjson.Result {
	if r := field(obj, "securityRequirements"); hasElements(r) {
		return r
	}
	return field(obj, "security")
}

// appendRequirements writes a requirement list in 1.0 form
// ([{"schemes":{"name":{"list":[scopes]}}}]) or 0.x form ([{"name":[scopes]}])
// and reports how many alternatives it wrote. It reads either form under
// either key, with or without the StringList "list" wrapper (a2a-go 1.0
// omits it). An alternative whose entries are all unreadable is dropped
// rather than written as {}, which would mean "no authentication".
func appendRequirements(dst []byte, reqs gjson.Result, v10 bool) ([]byte, int) {
	a := openWriter(dst, '[')
	n := 0
	reqs.ForEach(func(_, req gjson.Result) bool {
		if !req.IsObject() {
			return true
		}
		entries := req
		if s := field(req, "schemes"); s.IsObject() {
			entries = s // 1.0 form; a 0.x scheme named "schemes" maps to an array
		}
		m := a.mark()
		a.elem()
		var seen []string
		total := 0
		if v10 {
			o := openWriter(a.buf, '{')
			var s writer
			entries.ForEach(func(name, scopes gjson.Result) bool {
				total++
				list, ok := scopesOf(scopes)
				if !ok || markSeen(&seen, name.Str) {
					return true
				}
				if len(seen) == 1 {
					o.key("schemes")
					s = openWriter(o.buf, '{')
				}
				s.rawKey(name.Raw)
				// ProtoJSON writes an empty StringList as {}.
				l := openWriter(s.buf, '{')
				l.optionalStrings("list", list)
				s.buf = l.close()
				return true
			})
			if len(seen) > 0 {
				o.buf = s.close()
			}
			a.buf = o.close()
		} else {
			o := openWriter(a.buf, '{')
			entries.ForEach(func(name, scopes gjson.Result) bool {
				total++
				list, ok := scopesOf(scopes)
				if !ok || markSeen(&seen, name.Str) {
					return true
				}
				o.rawKey(name.Raw)
				o.buf = appendStrings(o.buf, list)
				return true
			})
			a.buf = o.close()
		}
		if total > 0 && len(seen) == 0 {
			a.rollback(m)
			return true
		}
		n++
		return true
	})
	return a.close(), n
}

// scopesOf returns the scope list of one requirement entry: a 0.x or a2a-go
// array, or a ProtoJSON StringList ({"list":[...]}, {} when empty).
func scopesOf(v gjson.Result) (gjson.Result, bool) {
	switch {
	case v.IsArray():
		return v, true
	case v.IsObject():
		return field(v, "list"), true
	}
	return gjson.Result{}, false
}

// --- security schemes

// schemeKind is one security scheme type in both spellings.
type schemeKind struct {
	wrapper string   // 1.0 oneof key
	typ     string   // 0.x "type" value
	fields  []string // string fields by their 1.0 names, in proto order; "flows" holds the OAuth flows
	since03 bool     // absent from 0.2.5
}

var schemeKinds = []schemeKind{
	{"apiKeySecurityScheme", "apiKey", []string{"description", "location", "name"}, false},
	{"httpAuthSecurityScheme", "http", []string{"description", "scheme", "bearerFormat"}, false},
	{"oauth2SecurityScheme", "oauth2", []string{"description", "flows", "oauth2MetadataUrl"}, false},
	{"openIdConnectSecurityScheme", "openIdConnect", []string{"description", "openIdConnectUrl"}, false},
	{"mtlsSecurityScheme", "mutualTLS", []string{"description"}, true},
}

// flowKinds lists the OAuth flows in the order a single 1.0 flow is
// chosen from several 0.x ones (@a2a-js/sdk toCoreOAuthFlows; a2a-python lets
// the last one win instead, see a2a-dialects.md §8.3).
var flowKinds = []struct {
	name   string
	fields []string // string fields in proto order; scopes and pkceRequired follow
	v0x    bool     // 0.x has the flow; deviceCode is 1.0 only
}{
	{"authorizationCode", []string{"authorizationUrl", "tokenUrl", "refreshUrl"}, true},
	{"clientCredentials", []string{"tokenUrl", "refreshUrl"}, true},
	{"implicit", []string{"authorizationUrl", "refreshUrl"}, true},
	{"password", []string{"tokenUrl", "refreshUrl"}, true},
	{"deviceCode", []string{"deviceAuthorizationUrl", "tokenUrl", "refreshUrl"}, false},
}

// scheme is one security scheme read from either dialect.
type scheme struct {
	kind *schemeKind
	body gjson.Result // the 1.0 wrapper's value, or the 0.x object itself
	v0x  bool
}

// readScheme reads v, preferring the 1.0 wrapper when both spellings are
// present (a hybrid card) because only it carries pkceRequired and deviceCode.
func readScheme(v gjson.Result) (scheme, bool) {
	if !v.IsObject() {
		return scheme{}, false
	}
	for i := range schemeKinds {
		if w := field(v, schemeKinds[i].wrapper); w.IsObject() {
			return scheme{kind: &schemeKinds[i], body: w}, true
		}
	}
	t := v.Get("type")
	for i := range schemeKinds {
		if t.Type == gjson.String && t.Str == schemeKinds[i].typ {
			return scheme{kind: &schemeKinds[i], body: v, v0x: true}, true
		}
	}
	return scheme{}, false
}

// get returns the field named by its 1.0 name, whatever the spelling of s.
func (s scheme) get(name string) gjson.Result {
	if s.v0x && name == "location" {
		return s.body.Get("in")
	}
	return field(s.body, name)
}

// appendSchemes writes the securitySchemes map in form f and reports how
// many schemes it wrote. Schemes form f cannot express are left out: an
// unknown type, mutualTLS in 0.2.5, an OAuth2 scheme without a flow f has
// (deviceCode going to 0.x). The hybrid form leaves out what 0.x cannot
// express, because a scheme without "type" makes a2a-go 0.3 reject the card.
func appendSchemes(dst []byte, schemes gjson.Result, f form) ([]byte, int) {
	o := openWriter(dst, '{')
	var seen []string
	schemes.ForEach(func(name, v gjson.Result) bool {
		s, ok := readScheme(v)
		if !ok || markSeen(&seen, name.Str) {
			return true
		}
		m := o.mark()
		o.rawKey(name.Raw)
		body := openWriter(o.buf, '{')
		ok = true
		if f != formV10 {
			ok = body.schemeV0x(s, f)
		}
		if ok && (f == formV10 || f == formHybrid) {
			body.key(s.kind.wrapper)
			inner := openWriter(body.buf, '{')
			ok = inner.schemeFields(s, formV10)
			body.buf = inner.close()
		}
		o.buf = body.close()
		if !ok {
			o.rollback(m)
			seen = seen[:len(seen)-1]
		}
		return true
	})
	return o.close(), len(seen)
}

// schemeV0x writes s as 0.x members ("type" first) into w.
func (w *writer) schemeV0x(s scheme, f form) bool {
	if f == formV025 && s.kind.since03 {
		return false
	}
	w.str("type", s.kind.typ)
	return w.schemeFields(s, f)
}

// schemeFields writes the fields of s spelled for form f (formV10 for the
// inside of a 1.0 wrapper, a 0.x form otherwise) and reports false when s
// needs an OAuth flow that form lacks.
func (w *writer) schemeFields(s scheme, f form) bool {
	for _, name := range s.kind.fields {
		switch {
		case name == "flows":
			if !w.flows(field(s.body, "flows"), f) {
				return false
			}
		case name == "oauth2MetadataUrl" && f == formV025:
			// 0.3 added it.
		case name == "location" && f != formV10:
			w.optionalString("in", s.get(name))
		default:
			w.optionalString(name, s.get(name))
		}
	}
	return true
}

// flows writes the first flow of flows that form f has, as "flows":{...}.
func (w *writer) flows(flows gjson.Result, f form) bool {
	for _, k := range flowKinds {
		flow := field(flows, k.name)
		if !flow.IsObject() || !k.v0x && f != formV10 {
			continue
		}
		w.key("flows")
		outer := openWriter(w.buf, '{')
		outer.key(k.name)
		o := openWriter(outer.buf, '{')
		for _, name := range k.fields {
			o.optionalString(name, field(flow, name))
		}
		// 0.x requires scopes; ProtoJSON leaves an empty map out, and a
		// false pkceRequired.
		m := o.mark()
		o.key("scopes")
		before := len(o.buf)
		o.buf = appendScopeMap(o.buf, field(flow, "scopes"))
		if f == formV10 && len(o.buf)-before == len("{}") {
			o.rollback(m)
		}
		if pkce := field(flow, "pkceRequired"); f == formV10 && k.name == "authorizationCode" && pkce.Type == gjson.True {
			o.optionalBool("pkceRequired", pkce)
		}
		outer.buf = o.close()
		w.buf = outer.close()
		return true
	}
	return false
}

// appendScopeMap writes an OAuth scope map (name to description),
// keeping string values only.
func appendScopeMap(dst []byte, scopes gjson.Result) []byte {
	o := openWriter(dst, '{')
	var seen []string
	scopes.ForEach(func(name, desc gjson.Result) bool {
		if desc.Type == gjson.String && !markSeen(&seen, name.Str) {
			o.rawKey(name.Raw)
			o.buf = append(o.buf, desc.Raw...)
		}
		return true
	})
	return o.close()
}

// --- publishing

// published is the canonical card with the publishing decisions applied.
type published struct {
	root                                                  gjson.Result // the canonical card
	name, description, version, iconURL, documentationURL gjson.Result
	provider, skills                                      gjson.Result
	schemes, requirements                                 gjson.Result      // absent without Bearer
	extended                                              gjson.Result      // true, or absent
	ifaces                                                []servedInterface // in card order, never empty
}

// servedInterface is one binding the gateway serves for the agent, where.
type servedInterface struct {
	binding dialect.Binding
	url     string
}

// servedInterfaces lists p's bindings in card order (dialect.Bindings), gRPC
// only with a target.
func servedInterfaces(p PublishOptions) []servedInterface {
	var list []servedInterface
	for _, b := range dialect.Bindings {
		served := b == dialect.JSONRPC && len(p.Bindings) == 0
		for _, pb := range p.Bindings {
			served = served || pb == b
		}
		switch {
		case !served:
		case b == dialect.GRPC:
			if p.GRPCURL != "" {
				list = append(list, servedInterface{b, p.GRPCURL})
			}
		default:
			list = append(list, servedInterface{b, p.URL})
		}
	}
	return list
}

func renderForm(canon []byte, p PublishOptions, f form) ([]byte, error) {
	c, err := newCardPublished(canon, p)
	if err != nil {
		return nil, err
	}
	dst := make([]byte, 0, len(canon)+256)
	if f == formV10 || f == formHybrid {
		return c.appendV10(dst, f), nil
	}
	return c.appendV0x(dst, f), nil
}

func newCardPublished(canon []byte, p PublishOptions) (*published, error) {
	root, err := parseCard(canon)
	if err != nil {
		return nil, err
	}
	if err := checkPublicURL(p.URL); err != nil {
		return nil, err
	}
	c := &published{
		root:             root,
		name:             overrideOr(p.Overrides.Name, field(root, "name")),
		description:      overrideOr(p.Overrides.Description, field(root, "description")),
		version:          field(root, "version"),
		iconURL:          overrideOr(p.Overrides.IconURL, field(root, "iconUrl")),
		documentationURL: overrideOr(p.Overrides.DocumentationURL, field(root, "documentationUrl")),
		provider:         field(root, "provider"),
		skills:           field(root, "skills"),
		ifaces:           servedInterfaces(p),
	}
	if len(c.ifaces) == 0 {
		return nil, errors.New("card publish: no binding to list (gRPC alone needs a gRPC URL)")
	}
	if !nonEmptyString(c.name) {
		return nil, fmt.Errorf("%w: name is missing or not a non-empty string", errInvalid)
	}
	if pr := p.Overrides.Provider; pr != nil {
		o := openWriter(nil, '{')
		o.str("organization", pr.Organization)
		o.str("url", pr.URL)
		c.provider = gjson.ParseBytes(o.close())
	}
	c.iconURL, c.documentationURL = webURLOnly(c.iconURL), webURLOnly(c.documentationURL)
	if u := field(c.provider, "url"); u.Exists() && !isWebURL(u) {
		// The organization stays; every schema requires a url, so it is
		// written empty.
		o := openWriter(nil, '{')
		o.str("organization", field(c.provider, "organization").Str)
		o.str("url", "")
		c.provider = gjson.ParseBytes(o.close())
	}
	if p.Overrides.Skills != nil {
		if c.skills, err = parseSkills(p.Overrides.Skills); err != nil {
			return nil, err
		}
	}
	if p.Bearer {
		c.schemes, c.requirements = bearerSchemes, bearerRequirements
	}
	if p.ExtendedCard {
		c.extended = jsonTrue
	}
	return c, nil
}

func checkPublicURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("card publish url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("card publish url %q: want an absolute http or https URL", raw)
	}
	return nil
}

// UnsafeURLs lists the card's URL fields (iconUrl, documentationUrl,
// provider.url) that are not http or https URLs and so are not published:
// a javascript: or file: URL on a card a client renders is the card
// author's attack on that client. The caller logs them.
func UnsafeURLs(canon []byte) []string {
	root, err := parseCard(canon)
	if err != nil {
		return nil
	}
	var unsafe []string
	for _, f := range [...]struct {
		name string
		v    gjson.Result
	}{
		{"iconUrl", field(root, "iconUrl")},
		{"documentationUrl", field(root, "documentationUrl")},
		{"provider.url", field(field(root, "provider"), "url")},
	} {
		if nonEmptyString(f.v) && !isWebURL(f.v) {
			unsafe = append(unsafe, f.name)
		}
	}
	return unsafe
}

// isWebURL reports whether v is an absolute http or https URL (an empty
// string counts as one: it publishes nothing).
func isWebURL(v gjson.Result) bool {
	if v.Type != gjson.String {
		return false
	}
	if v.Str == "" {
		return true
	}
	u, err := url.Parse(v.Str)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// webURLOnly is v when it is a URL a card may publish, else nothing.
func webURLOnly(v gjson.Result) gjson.Result {
	if !isWebURL(v) {
		return gjson.Result{}
	}
	return v
}

// parseSkills validates the skills override: a JSON array of objects.
func parseSkills(raw []byte) (gjson.Result, error) {
	if !jsonscan.Valid(raw) {
		return gjson.Result{}, errors.New("card skills override: not valid JSON (or nested deeper than 100 levels)")
	}
	skills := gjson.ParseBytes(raw)
	if !skills.IsArray() {
		return gjson.Result{}, errors.New("card skills override: not a JSON array")
	}
	var err error
	i := 0
	skills.ForEach(func(_, s gjson.Result) bool {
		if !s.IsObject() {
			err = fmt.Errorf("card skills override: element %d is not an object", i)
			return false
		}
		i++
		return true
	})
	return skills, err
}

// overrideOr returns the override as a JSON string when set, else v.
func overrideOr(override string, v gjson.Result) gjson.Result {
	if override == "" {
		return v
	}
	return gjson.ParseBytes(gjson.AppendJSONString(nil, override))
}

// appendV0x writes the card in 0.2.5 or 0.3 form.
func (c *published) appendV0x(dst []byte, f form) []byte {
	o := openWriter(dst, '{')
	o.raw("name", c.name.Raw)
	o.raw("description", stringOr(c.description, `""`))
	o.raw("version", stringOr(c.version, `""`))
	o.str("url", c.ifaces[0].url)
	o.str("preferredTransport", c.ifaces[0].binding.CardName())
	if f == formV025 {
		o.raw("protocolVersion", `"0.2.5"`)
	} else {
		o.raw("protocolVersion", `"0.3.0"`)
		o.additionalInterfaces(c.ifaces)
	}
	c.appendCommonTail(&o, f)
	if c.extended.Exists() {
		o.raw("supportsAuthenticatedExtendedCard", c.extended.Raw)
	}
	return o.close()
}

// appendV10 writes the card in 1.0 form, or in hybrid form when f is formHybrid.
func (c *published) appendV10(dst []byte, f form) []byte {
	o := openWriter(dst, '{')
	o.raw("name", c.name.Raw)
	o.raw("description", stringOr(c.description, `""`))
	o.key("supportedInterfaces")
	a := openWriter(o.buf, '[')
	// A 1.0 card lists 1.0 only, as a pure 1.0 card must; the hybrid
	// card, for clients that named no version, lists 0.3 too.
	versions := []string{"1.0"}
	if f == formHybrid {
		versions = append(versions, "0.3")
	}
	for _, version := range versions {
		for _, it := range c.ifaces {
			a.elem()
			i := openWriter(a.buf, '{')
			i.str("url", it.url)
			i.str("protocolBinding", it.binding.CardName())
			i.str("protocolVersion", version)
			a.buf = i.close()
		}
	}
	o.buf = a.close()
	if providerPresent(c.provider) {
		o.key("provider")
		o.buf = appendProvider(o.buf, c.provider)
	}
	o.raw("version", stringOr(c.version, `""`))
	o.optionalString("documentationUrl", c.documentationURL)
	o.key("capabilities")
	o.buf = appendCapabilities(o.buf, field(c.root, "capabilities"), c.extended, f)
	o.securitySchemes(c.schemes, f)
	o.requirements("securityRequirements", c.requirements, true)
	c.appendModesAndSkills(&o, f)
	o.optionalString("iconUrl", c.iconURL)
	if f == formHybrid {
		o.str("url", c.ifaces[0].url)
		o.str("preferredTransport", c.ifaces[0].binding.CardName())
		o.raw("protocolVersion", `"0.3.0"`)
		o.additionalInterfaces(c.ifaces)
		if c.extended.Exists() {
			o.raw("supportsAuthenticatedExtendedCard", c.extended.Raw)
		}
		o.requirements("security", c.requirements, false)
	}
	return o.close()
}

// appendCommonTail writes the 0.x card fields that follow the interface fields.
func (c *published) appendCommonTail(o *writer, f form) {
	if providerPresent(c.provider) {
		o.key("provider")
		o.buf = appendProvider(o.buf, c.provider)
	}
	o.optionalString("iconUrl", c.iconURL)
	o.optionalString("documentationUrl", c.documentationURL)
	o.key("capabilities")
	o.buf = appendCapabilities(o.buf, field(c.root, "capabilities"), c.extended, f)
	o.securitySchemes(c.schemes, f)
	o.requirements("security", c.requirements, false)
	c.appendModesAndSkills(o, f)
}

// appendModesAndSkills writes the default modes and the skills, without
// per-skill security: it named the backend's schemes, which are not published.
func (c *published) appendModesAndSkills(o *writer, f form) {
	if f == formV10 {
		o.optionalStrings("defaultInputModes", field(c.root, "defaultInputModes"))
		o.optionalStrings("defaultOutputModes", field(c.root, "defaultOutputModes"))
		o.optionalSkills(c.skills, false)
		return
	}
	o.key("defaultInputModes")
	o.buf = appendStrings(o.buf, field(c.root, "defaultInputModes"))
	o.key("defaultOutputModes")
	o.buf = appendStrings(o.buf, field(c.root, "defaultOutputModes"))
	o.key("skills")
	o.buf = appendSkills(o.buf, c.skills, false, false)
}

// --- JSON writing

// writer appends one JSON object or array to buf, member by member.
// Nested values are written by opening another writer on w.buf and
// assigning its close() back to w.buf.
type writer struct {
	buf   []byte
	end   byte
	empty bool
}

// writerMark is a point to roll a writer back to.
type writerMark struct {
	n     int
	empty bool
}

func openWriter(dst []byte, open byte) writer {
	end := byte('}')
	if open == '[' {
		end = ']'
	}
	return writer{buf: append(dst, open), end: end, empty: true}
}

func (w *writer) close() []byte { return append(w.buf, w.end) }

func (w *writer) mark() writerMark { return writerMark{len(w.buf), w.empty} }

func (w *writer) rollback(m writerMark) { w.buf, w.empty = w.buf[:m.n], m.empty }

// elem starts an array element.
func (w *writer) elem() {
	if !w.empty {
		w.buf = append(w.buf, ',')
	}
	w.empty = false
}

// key starts a member named by a constant.
func (w *writer) key(k string) {
	w.elem()
	w.buf = gjson.AppendJSONString(w.buf, k)
	w.buf = append(w.buf, ':')
}

// rawKey starts a member whose name is raw JSON copied from the input.
func (w *writer) rawKey(raw string) {
	w.elem()
	w.buf = append(w.buf, raw...)
	w.buf = append(w.buf, ':')
}

func (w *writer) raw(k, v string) {
	w.key(k)
	w.buf = append(w.buf, v...)
}

func (w *writer) str(k, v string) {
	w.key(k)
	w.buf = gjson.AppendJSONString(w.buf, v)
}

func (w *writer) optionalString(k string, v gjson.Result) {
	if nonEmptyString(v) {
		w.raw(k, v.Raw)
	}
}

func (w *writer) optionalBool(k string, v gjson.Result) {
	if isBool(v) {
		w.raw(k, v.Raw)
	}
}

func (w *writer) optionalStrings(k string, v gjson.Result) {
	m := w.mark()
	w.key(k)
	before := len(w.buf)
	w.buf = appendStrings(w.buf, v)
	if len(w.buf)-before == len("[]") {
		w.rollback(m)
	}
}

func (w *writer) securitySchemes(schemes gjson.Result, f form) {
	m := w.mark()
	w.key("securitySchemes")
	var n int
	w.buf, n = appendSchemes(w.buf, schemes, f)
	if n == 0 {
		w.rollback(m)
	}
}

func (w *writer) requirements(k string, reqs gjson.Result, v10 bool) {
	m := w.mark()
	w.key(k)
	var n int
	w.buf, n = appendRequirements(w.buf, reqs, v10)
	if n == 0 {
		w.rollback(m)
	}
}

// additionalInterfaces writes the 0.3 list: every interface, the main one
// repeated as the 0.3 schema recommends.
func (w *writer) additionalInterfaces(ifaces []servedInterface) {
	w.key("additionalInterfaces")
	a := openWriter(w.buf, '[')
	for _, it := range ifaces {
		a.elem()
		o := openWriter(a.buf, '{')
		o.str("url", it.url)
		o.str("transport", it.binding.CardName())
		a.buf = o.close()
	}
	w.buf = a.close()
}

// --- reading helpers

// field returns obj's member camel, or its snake_case spelling, which
// ProtoJSON parsers must also accept (a2a-python emits it on request).
// camel is always a constant, never input, so it is a safe gjson path.
func field(obj gjson.Result, camel string) gjson.Result {
	if !obj.IsObject() {
		return gjson.Result{}
	}
	if r := obj.Get(camel); r.Exists() {
		return r
	}
	if snake := snakeCase(camel); snake != camel {
		return obj.Get(snake)
	}
	return gjson.Result{}
}

func snakeCase(camel string) string {
	if strings.ToLower(camel) == camel {
		return camel
	}
	var b strings.Builder
	for i := 0; i < len(camel); i++ {
		c := camel[i]
		if 'A' <= c && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

func nonEmptyString(v gjson.Result) bool { return v.Type == gjson.String && v.Str != "" }

func isBool(v gjson.Result) bool { return v.Type == gjson.True || v.Type == gjson.False }

// stringOr returns v as raw JSON when it is a string, else def.
func stringOr(v gjson.Result, def string) string {
	if v.Type == gjson.String {
		return v.Raw
	}
	return def
}

func hasElements(v gjson.Result) bool {
	if !v.IsArray() {
		return false
	}
	found := false
	v.ForEach(func(_, _ gjson.Result) bool {
		found = true
		return false
	})
	return found
}

// markSeen records name and reports whether it was already recorded: on a
// duplicate key the first member wins, as gjson reads it.
func markSeen(seen *[]string, name string) bool {
	for _, s := range *seen {
		if s == name {
			return true
		}
	}
	*seen = append(*seen, name)
	return false
}

// Skill is one skill of a canonical card: its id and its JSON object.
type Skill struct {
	ID   string
	JSON []byte
}

// Skills returns the skills of a canonical card, in order.
func Skills(canon []byte) []Skill {
	var skills []Skill
	gjson.GetBytes(canon, "skills").ForEach(func(_, s gjson.Result) bool {
		skills = append(skills, Skill{ID: s.Get("id").Str, JSON: []byte(s.Raw)})
		return true
	})
	return skills
}

// AppendSkillList appends skills as a JSON array of skill objects.
func AppendSkillList(dst []byte, skills []Skill) []byte {
	dst = append(dst, '[')
	for i, s := range skills {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, s.JSON...)
	}
	return append(dst, ']')
}

// ExtendedCardCapable reports whether a canonical card says its agent
// serves an extended card.
func ExtendedCardCapable(canon []byte) bool {
	return gjson.GetBytes(canon, "capabilities.extendedAgentCard").Bool()
}

// StreamingCapable reports whether a canonical card says its agent
// streams (capabilities.streaming).
func StreamingCapable(canon []byte) bool {
	return gjson.GetBytes(canon, "capabilities.streaming").Bool()
}

// PushNotificationsCapable reports whether a canonical card says its agent
// sends push notifications.
func PushNotificationsCapable(canon []byte) bool {
	return gjson.GetBytes(canon, "capabilities.pushNotifications").Bool()
}
