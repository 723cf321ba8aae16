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

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
)

// errInvalid reports an agent card that cannot be translated: not a JSON
// object, without a name, or (for Dialect) without an interface the
// gateway can speak to.
var errInvalid = errors.New("invalid agent card")

// PublishOptions says how the gateway publishes a backend's card.
type PublishOptions struct {
	// URL is the gateway's public JSON-RPC URL for this agent. It becomes
	// every interface URL of the published card; no backend URL survives.
	URL string
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
	if !gjson.ValidBytes(card) {
		return false
	}
	return cardHasElements(gjson.GetBytes(card, "signatures"))
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
	root, err := cardParse(card)
	if err != nil {
		return "", "", err
	}
	ifaces, from := cardInterfaces(root)
	return cardDialectOf(ifaces, from)
}

// ToCanonical translates a backend's agent card of any dialect into the
// canonical 1.0 ProtoJSON card. Keys 1.0 does not define are dropped, among
// them signatures (see HasSignatures) and stateTransitionHistory. An
// OAuth2 scheme listing several flows keeps the first of authorizationCode,
// clientCredentials, implicit, password (the order of @a2a-js/sdk; 1.0 allows
// one flow). The result is stable: translating it again returns it unchanged.
func ToCanonical(card []byte) ([]byte, error) {
	root, err := cardParse(card)
	if err != nil {
		return nil, err
	}
	name := cardField(root, "name")
	if !cardNonEmptyString(name) {
		return nil, fmt.Errorf("%w: name is missing or not a non-empty string", errInvalid)
	}
	ifaces, _ := cardInterfaces(root)
	caps := cardField(root, "capabilities")
	extended := cardField(caps, "extendedAgentCard")
	if !cardIsBool(extended) {
		extended = cardField(root, "supportsAuthenticatedExtendedCard")
	}

	o := cardOpen(make([]byte, 0, len(card)), '{')
	o.raw("name", name.Raw)
	o.raw("description", cardStringOr(cardField(root, "description"), `""`))
	o.key("supportedInterfaces")
	o.buf = cardAppendInterfaces(o.buf, ifaces)
	if p := cardField(root, "provider"); cardProviderPresent(p) {
		o.key("provider")
		o.buf = cardAppendProvider(o.buf, p)
	}
	o.raw("version", cardStringOr(cardField(root, "version"), `""`))
	o.optionalString("documentationUrl", cardField(root, "documentationUrl"))
	o.key("capabilities")
	o.buf = cardAppendCapabilities(o.buf, caps, extended, cardV10)
	o.securitySchemes(cardField(root, "securitySchemes"), cardV10)
	o.requirements("securityRequirements", cardRequirementsOf(root), true)
	o.key("defaultInputModes")
	o.buf = cardAppendStrings(o.buf, cardField(root, "defaultInputModes"))
	o.key("defaultOutputModes")
	o.buf = cardAppendStrings(o.buf, cardField(root, "defaultOutputModes"))
	o.key("skills")
	o.buf = cardAppendSkills(o.buf, cardField(root, "skills"), true)
	o.optionalString("iconUrl", cardField(root, "iconUrl"))
	return o.close(), nil
}

// V025 renders the canonical card as an A2A 0.2.5 card, as served at
// /.well-known/agent.json: protocolVersion "0.2.5", url and preferredTransport
// "JSONRPC", 0.x security, supportsAuthenticatedExtendedCard. 0.2.5 has no
// mutualTLS scheme, no oauth2MetadataUrl and no per-skill security.
func V025(canon []byte, p PublishOptions) ([]byte, error) {
	return cardRender(canon, p, cardV025)
}

// V03 renders the canonical card as a pure A2A 0.3 card: protocolVersion
// "0.3.0", url, preferredTransport and additionalInterfaces "JSONRPC", 0.x
// security, supportsAuthenticatedExtendedCard.
func V03(canon []byte, p PublishOptions) ([]byte, error) {
	return cardRender(canon, p, cardV03)
}

// V10 renders the canonical card as a pure A2A 1.0 card: supportedInterfaces
// lists JSONRPC at 1.0, then JSONRPC at 0.3 (the gateway accepts both at
// p.URL), capabilities.extendedAgentCard, 1.0 security.
func V10(canon []byte, p PublishOptions) ([]byte, error) {
	return cardRender(canon, p, cardV10)
}

// Hybrid renders the canonical card for /.well-known/agent-card.json as
// one document that 0.3 and 1.0 clients both accept: every V10 field plus
// the 0.3 fields url, preferredTransport, protocolVersion "0.3.0",
// additionalInterfaces, supportsAuthenticatedExtendedCard and security. Each
// security scheme carries both spellings (see the comment at the top of this
// file). Prefer V03 or V10 when the request's A2A-Version header
// names a version.
func Hybrid(canon []byte, p PublishOptions) ([]byte, error) {
	return cardRender(canon, p, cardHybrid)
}

// cardForm is a card spelling the writers produce.
type cardForm uint8

const (
	cardV025 cardForm = iota + 1
	cardV03
	cardV10
	cardHybrid
)

// Values the writers emit.
var (
	cardJSONRPC   = gjson.Parse(`"JSONRPC"`)
	cardDefault03 = gjson.Parse(`"0.3"`) // protocolVersion assumed for a 0.x card without one
	cardTrue      = gjson.Parse(`true`)
	// The only security the gateway publishes: the bearer JWT it verifies.
	cardBearerSchemes      = gjson.Parse(`{"bearer":{"httpAuthSecurityScheme":{"scheme":"bearer","bearerFormat":"JWT"}}}`)
	cardBearerRequirements = gjson.Parse(`[{"schemes":{"bearer":{"list":[]}}}]`)
)

// cardParse validates card once and returns its root object.
func cardParse(card []byte) (gjson.Result, error) {
	if !gjson.ValidBytes(card) {
		return gjson.Result{}, fmt.Errorf("%w: not valid JSON", errInvalid)
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

// cardSource says where a card's interfaces came from and explains them.
type cardSource uint8

const (
	fromSupportedInterfaces cardSource = iota + 1
	fromURL                            // url + additionalInterfaces at the top-level protocolVersion
	fromURLDefaulted                   // the same, without a protocolVersion
)

// cardInterfaces lists root's interfaces the way the 1.0 SDKs' card parsers
// do: supportedInterfaces wins when it has any entry, and the 0.x fields are
// then ignored (a2a-python parse_agent_card, a2a-go a2av0, a2a-js).
func cardInterfaces(root gjson.Result) ([]cardInterface, cardSource) {
	if si := cardField(root, "supportedInterfaces"); cardHasElements(si) {
		var list []cardInterface
		si.ForEach(func(_, e gjson.Result) bool {
			it := cardInterface{url: cardField(e, "url"), binding: cardField(e, "protocolBinding")}
			if !cardNonEmptyString(it.url) || !cardNonEmptyString(it.binding) {
				return true
			}
			if t := cardField(e, "tenant"); cardNonEmptyString(t) {
				it.tenant = t
			}
			if v := cardField(e, "protocolVersion"); cardNonEmptyString(v) {
				it.version = v
			}
			list = append(list, it)
			return true
		})
		return list, fromSupportedInterfaces
	}
	primary := cardField(root, "url")
	if !cardNonEmptyString(primary) {
		return nil, fromURL
	}
	source := fromURL
	version := cardField(root, "protocolVersion")
	if !cardNonEmptyString(version) {
		version, source = cardDefault03, fromURLDefaulted
	}
	binding := cardField(root, "preferredTransport")
	if !cardNonEmptyString(binding) {
		binding = cardJSONRPC
	}
	list := []cardInterface{{url: primary, binding: binding, version: version}}
	cardField(root, "additionalInterfaces").ForEach(func(_, e gjson.Result) bool {
		u, t := cardField(e, "url"), cardField(e, "transport")
		if !cardNonEmptyString(u) || !cardNonEmptyString(t) {
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

func cardDialectOf(ifaces []cardInterface, from cardSource) (dialect.Version, string, error) {
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
		if it.binding.Str == "JSONRPC" && cardVersionIs(it.version.Str, "1", "0") {
			return explain(it, dialect.Version10)
		}
	}
	for _, it := range ifaces {
		if it.binding.Str != "JSONRPC" {
			continue
		}
		switch {
		case cardVersionIs(it.version.Str, "0", "3"):
			return explain(it, dialect.Version03)
		case cardVersionIs(it.version.Str, "0", "2"):
			return explain(it, dialect.Version025)
		}
	}
	first := ifaces[0]
	return "", "", fmt.Errorf("%w: no JSONRPC interface at 0.2, 0.3 or 1.0 (first interface: %q %q at %q)",
		errInvalid, first.binding.Str, first.version.Str, first.url.Str)
}

// cardVersionIs reports whether v is major.minor, optionally followed by
// .patch, as "1.0", "1.0.1" or "0.3.0".
func cardVersionIs(v, major, minor string) bool {
	rest, ok := strings.CutPrefix(v, major+"."+minor)
	return ok && (rest == "" || len(rest) > 1 && rest[0] == '.')
}

func cardAppendInterfaces(dst []byte, ifaces []cardInterface) []byte {
	a := cardOpen(dst, '[')
	for _, it := range ifaces {
		a.elem()
		o := cardOpen(a.buf, '{')
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

func cardProviderPresent(p gjson.Result) bool {
	return cardNonEmptyString(cardField(p, "organization")) || cardNonEmptyString(cardField(p, "url"))
}

// cardAppendProvider writes both provider fields: every schema requires both,
// and a2a-python 0.3 rejects a provider without either.
func cardAppendProvider(dst []byte, p gjson.Result) []byte {
	o := cardOpen(dst, '{')
	o.raw("organization", cardStringOr(cardField(p, "organization"), `""`))
	o.raw("url", cardStringOr(cardField(p, "url"), `""`))
	return o.close()
}

// cardAppendCapabilities writes caps in form f. extended is the extended-card
// flag (a JSON bool, or absent); 0.x keeps it at the card's top level.
// stateTransitionHistory has no 1.0 spelling and is dropped.
func cardAppendCapabilities(dst []byte, caps, extended gjson.Result, f cardForm) []byte {
	o := cardOpen(dst, '{')
	o.optionalBool("streaming", cardField(caps, "streaming"))
	o.optionalBool("pushNotifications", cardField(caps, "pushNotifications"))
	if ext := cardField(caps, "extensions"); cardHasElements(ext) {
		m := o.mark()
		o.key("extensions")
		var n int
		o.buf, n = cardAppendExtensions(o.buf, ext)
		if n == 0 {
			o.rollback(m)
		}
	}
	if f == cardV10 || f == cardHybrid {
		o.optionalBool("extendedAgentCard", extended)
	}
	return o.close()
}

func cardAppendExtensions(dst []byte, exts gjson.Result) ([]byte, int) {
	a := cardOpen(dst, '[')
	n := 0
	exts.ForEach(func(_, e gjson.Result) bool {
		uri := cardField(e, "uri")
		if !cardNonEmptyString(uri) {
			return true
		}
		a.elem()
		o := cardOpen(a.buf, '{')
		o.raw("uri", uri.Raw)
		o.optionalString("description", cardField(e, "description"))
		o.optionalBool("required", cardField(e, "required"))
		if params := cardField(e, "params"); params.IsObject() {
			o.raw("params", params.Raw)
		}
		a.buf = o.close()
		n++
		return true
	})
	return a.close(), n
}

// cardAppendSkills writes the skill objects of skills. Skill keys are the
// same in every dialect but for security; withRequirements keeps it, in 1.0
// form.
func cardAppendSkills(dst []byte, skills gjson.Result, withRequirements bool) []byte {
	a := cardOpen(dst, '[')
	skills.ForEach(func(_, s gjson.Result) bool {
		if !s.IsObject() {
			return true
		}
		a.elem()
		o := cardOpen(a.buf, '{')
		o.raw("id", cardStringOr(cardField(s, "id"), `""`))
		o.raw("name", cardStringOr(cardField(s, "name"), `""`))
		o.raw("description", cardStringOr(cardField(s, "description"), `""`))
		o.key("tags")
		o.buf = cardAppendStrings(o.buf, cardField(s, "tags"))
		o.optionalStrings("examples", cardField(s, "examples"))
		o.optionalStrings("inputModes", cardField(s, "inputModes"))
		o.optionalStrings("outputModes", cardField(s, "outputModes"))
		if withRequirements {
			o.requirements("securityRequirements", cardRequirementsOf(s), true)
		}
		a.buf = o.close()
		return true
	})
	return a.close()
}

// cardAppendStrings writes the string elements of arr, dropping the rest.
func cardAppendStrings(dst []byte, arr gjson.Result) []byte {
	a := cardOpen(dst, '[')
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

// cardRequirementsOf returns obj's security requirements: the 1.0 key when
// it lists any, else the 0.x key (a2a-python and a2a-go resolve hybrid cards
// the same way).
func cardRequirementsOf(obj gjson.Result) gjson.Result {
	if r := cardField(obj, "securityRequirements"); cardHasElements(r) {
		return r
	}
	return cardField(obj, "security")
}

// cardAppendRequirements writes a requirement list in 1.0 form
// ([{"schemes":{"name":{"list":[scopes]}}}]) or 0.x form ([{"name":[scopes]}])
// and reports how many alternatives it wrote. It reads either form under
// either key, with or without the StringList "list" wrapper (a2a-go 1.0
// omits it). An alternative whose entries are all unreadable is dropped
// rather than written as {}, which would mean "no authentication".
func cardAppendRequirements(dst []byte, reqs gjson.Result, v10 bool) ([]byte, int) {
	a := cardOpen(dst, '[')
	n := 0
	reqs.ForEach(func(_, req gjson.Result) bool {
		if !req.IsObject() {
			return true
		}
		entries := req
		if s := cardField(req, "schemes"); s.IsObject() {
			entries = s // 1.0 form; a 0.x scheme named "schemes" maps to an array
		}
		m := a.mark()
		a.elem()
		var seen []string
		total := 0
		if v10 {
			o := cardOpen(a.buf, '{')
			var s cardWriter
			entries.ForEach(func(name, scopes gjson.Result) bool {
				total++
				list, ok := cardScopes(scopes)
				if !ok || cardSeen(&seen, name.Str) {
					return true
				}
				if len(seen) == 1 {
					o.key("schemes")
					s = cardOpen(o.buf, '{')
				}
				s.rawKey(name.Raw)
				l := cardOpen(s.buf, '{')
				l.key("list")
				l.buf = cardAppendStrings(l.buf, list)
				s.buf = l.close()
				return true
			})
			if len(seen) > 0 {
				o.buf = s.close()
			}
			a.buf = o.close()
		} else {
			o := cardOpen(a.buf, '{')
			entries.ForEach(func(name, scopes gjson.Result) bool {
				total++
				list, ok := cardScopes(scopes)
				if !ok || cardSeen(&seen, name.Str) {
					return true
				}
				o.rawKey(name.Raw)
				o.buf = cardAppendStrings(o.buf, list)
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

// cardScopes returns the scope list of one requirement entry: a 0.x or a2a-go
// array, or a ProtoJSON StringList ({"list":[...]}, {} when empty).
func cardScopes(v gjson.Result) (gjson.Result, bool) {
	switch {
	case v.IsArray():
		return v, true
	case v.IsObject():
		return cardField(v, "list"), true
	}
	return gjson.Result{}, false
}

// --- security schemes

// cardSchemeKind is one security scheme type in both spellings.
type cardSchemeKind struct {
	wrapper string   // 1.0 oneof key
	typ     string   // 0.x "type" value
	fields  []string // string fields by their 1.0 names, in proto order; "flows" holds the OAuth flows
	since03 bool     // absent from 0.2.5
}

var cardSchemeKinds = []cardSchemeKind{
	{"apiKeySecurityScheme", "apiKey", []string{"description", "location", "name"}, false},
	{"httpAuthSecurityScheme", "http", []string{"description", "scheme", "bearerFormat"}, false},
	{"oauth2SecurityScheme", "oauth2", []string{"description", "flows", "oauth2MetadataUrl"}, false},
	{"openIdConnectSecurityScheme", "openIdConnect", []string{"description", "openIdConnectUrl"}, false},
	{"mtlsSecurityScheme", "mutualTLS", []string{"description"}, true},
}

// cardFlowKinds lists the OAuth flows in the order a single 1.0 flow is
// chosen from several 0.x ones (@a2a-js/sdk toCoreOAuthFlows; a2a-python lets
// the last one win instead, see a2a-dialects.md §8.3).
var cardFlowKinds = []struct {
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

// cardScheme is one security scheme read from either dialect.
type cardScheme struct {
	kind *cardSchemeKind
	body gjson.Result // the 1.0 wrapper's value, or the 0.x object itself
	v0x  bool
}

// cardReadScheme reads v, preferring the 1.0 wrapper when both spellings are
// present (a hybrid card) because only it carries pkceRequired and deviceCode.
func cardReadScheme(v gjson.Result) (cardScheme, bool) {
	if !v.IsObject() {
		return cardScheme{}, false
	}
	for i := range cardSchemeKinds {
		if w := cardField(v, cardSchemeKinds[i].wrapper); w.IsObject() {
			return cardScheme{kind: &cardSchemeKinds[i], body: w}, true
		}
	}
	t := v.Get("type")
	for i := range cardSchemeKinds {
		if t.Type == gjson.String && t.Str == cardSchemeKinds[i].typ {
			return cardScheme{kind: &cardSchemeKinds[i], body: v, v0x: true}, true
		}
	}
	return cardScheme{}, false
}

// get returns the field named by its 1.0 name, whatever the spelling of s.
func (s cardScheme) get(name string) gjson.Result {
	if s.v0x && name == "location" {
		return s.body.Get("in")
	}
	return cardField(s.body, name)
}

// cardAppendSchemes writes the securitySchemes map in form f and reports how
// many schemes it wrote. Schemes form f cannot express are left out: an
// unknown type, mutualTLS in 0.2.5, an OAuth2 scheme without a flow f has
// (deviceCode going to 0.x). The hybrid form leaves out what 0.x cannot
// express, because a scheme without "type" makes a2a-go 0.3 reject the card.
func cardAppendSchemes(dst []byte, schemes gjson.Result, f cardForm) ([]byte, int) {
	o := cardOpen(dst, '{')
	var seen []string
	schemes.ForEach(func(name, v gjson.Result) bool {
		s, ok := cardReadScheme(v)
		if !ok || cardSeen(&seen, name.Str) {
			return true
		}
		m := o.mark()
		o.rawKey(name.Raw)
		body := cardOpen(o.buf, '{')
		ok = true
		if f != cardV10 {
			ok = body.schemeV0x(s, f)
		}
		if ok && (f == cardV10 || f == cardHybrid) {
			body.key(s.kind.wrapper)
			inner := cardOpen(body.buf, '{')
			ok = inner.schemeFields(s, cardV10)
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
func (w *cardWriter) schemeV0x(s cardScheme, f cardForm) bool {
	if f == cardV025 && s.kind.since03 {
		return false
	}
	w.str("type", s.kind.typ)
	return w.schemeFields(s, f)
}

// schemeFields writes the fields of s spelled for form f (cardV10 for the
// inside of a 1.0 wrapper, a 0.x form otherwise) and reports false when s
// needs an OAuth flow that form lacks.
func (w *cardWriter) schemeFields(s cardScheme, f cardForm) bool {
	for _, name := range s.kind.fields {
		switch {
		case name == "flows":
			if !w.flows(cardField(s.body, "flows"), f) {
				return false
			}
		case name == "oauth2MetadataUrl" && f == cardV025:
			// 0.3 added it.
		case name == "location" && f != cardV10:
			w.optionalString("in", s.get(name))
		default:
			w.optionalString(name, s.get(name))
		}
	}
	return true
}

// flows writes the first flow of flows that form f has, as "flows":{...}.
func (w *cardWriter) flows(flows gjson.Result, f cardForm) bool {
	for _, k := range cardFlowKinds {
		flow := cardField(flows, k.name)
		if !flow.IsObject() || !k.v0x && f != cardV10 {
			continue
		}
		w.key("flows")
		outer := cardOpen(w.buf, '{')
		outer.key(k.name)
		o := cardOpen(outer.buf, '{')
		for _, name := range k.fields {
			o.optionalString(name, cardField(flow, name))
		}
		o.key("scopes")
		o.buf = cardAppendScopeMap(o.buf, cardField(flow, "scopes"))
		if f == cardV10 && k.name == "authorizationCode" {
			o.optionalBool("pkceRequired", cardField(flow, "pkceRequired"))
		}
		outer.buf = o.close()
		w.buf = outer.close()
		return true
	}
	return false
}

// cardAppendScopeMap writes an OAuth scope map (name to description),
// keeping string values only.
func cardAppendScopeMap(dst []byte, scopes gjson.Result) []byte {
	o := cardOpen(dst, '{')
	var seen []string
	scopes.ForEach(func(name, desc gjson.Result) bool {
		if desc.Type == gjson.String && !cardSeen(&seen, name.Str) {
			o.rawKey(name.Raw)
			o.buf = append(o.buf, desc.Raw...)
		}
		return true
	})
	return o.close()
}

// --- publishing

// cardPublished is the canonical card with the publishing decisions applied.
type cardPublished struct {
	root                                                  gjson.Result // the canonical card
	name, description, version, iconURL, documentationURL gjson.Result
	provider, skills                                      gjson.Result
	schemes, requirements                                 gjson.Result // absent without Bearer
	extended                                              gjson.Result // true, or absent
	url                                                   string
}

func cardRender(canon []byte, p PublishOptions, f cardForm) ([]byte, error) {
	c, err := newCardPublished(canon, p)
	if err != nil {
		return nil, err
	}
	dst := make([]byte, 0, len(canon)+256)
	if f == cardV10 || f == cardHybrid {
		return c.appendV10(dst, f), nil
	}
	return c.appendV0x(dst, f), nil
}

func newCardPublished(canon []byte, p PublishOptions) (*cardPublished, error) {
	root, err := cardParse(canon)
	if err != nil {
		return nil, err
	}
	if err := cardCheckPublicURL(p.URL); err != nil {
		return nil, err
	}
	c := &cardPublished{
		root:             root,
		name:             cardOverride(p.Overrides.Name, cardField(root, "name")),
		description:      cardOverride(p.Overrides.Description, cardField(root, "description")),
		version:          cardField(root, "version"),
		iconURL:          cardOverride(p.Overrides.IconURL, cardField(root, "iconUrl")),
		documentationURL: cardOverride(p.Overrides.DocumentationURL, cardField(root, "documentationUrl")),
		provider:         cardField(root, "provider"),
		skills:           cardField(root, "skills"),
		url:              p.URL,
	}
	if !cardNonEmptyString(c.name) {
		return nil, fmt.Errorf("%w: name is missing or not a non-empty string", errInvalid)
	}
	if pr := p.Overrides.Provider; pr != nil {
		o := cardOpen(nil, '{')
		o.str("organization", pr.Organization)
		o.str("url", pr.URL)
		c.provider = gjson.ParseBytes(o.close())
	}
	if p.Overrides.Skills != nil {
		if c.skills, err = cardParseSkills(p.Overrides.Skills); err != nil {
			return nil, err
		}
	}
	if p.Bearer {
		c.schemes, c.requirements = cardBearerSchemes, cardBearerRequirements
	}
	if p.ExtendedCard {
		c.extended = cardTrue
	}
	return c, nil
}

func cardCheckPublicURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("card publish url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("card publish url %q: want an absolute http or https URL", raw)
	}
	return nil
}

// cardParseSkills validates the skills override: a JSON array of objects.
func cardParseSkills(raw []byte) (gjson.Result, error) {
	if !gjson.ValidBytes(raw) {
		return gjson.Result{}, errors.New("card skills override: not valid JSON")
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

// cardOverride returns the override as a JSON string when set, else v.
func cardOverride(override string, v gjson.Result) gjson.Result {
	if override == "" {
		return v
	}
	return gjson.ParseBytes(gjson.AppendJSONString(nil, override))
}

// appendV0x writes the card in 0.2.5 or 0.3 form.
func (c *cardPublished) appendV0x(dst []byte, f cardForm) []byte {
	o := cardOpen(dst, '{')
	o.raw("name", c.name.Raw)
	o.raw("description", cardStringOr(c.description, `""`))
	o.raw("version", cardStringOr(c.version, `""`))
	o.str("url", c.url)
	o.raw("preferredTransport", cardJSONRPC.Raw)
	if f == cardV025 {
		o.raw("protocolVersion", `"0.2.5"`)
	} else {
		o.raw("protocolVersion", `"0.3.0"`)
		o.additionalInterfaces(c.url)
	}
	c.appendCommonTail(&o, f)
	if c.extended.Exists() {
		o.raw("supportsAuthenticatedExtendedCard", c.extended.Raw)
	}
	return o.close()
}

// appendV10 writes the card in 1.0 form, or in hybrid form when f is cardHybrid.
func (c *cardPublished) appendV10(dst []byte, f cardForm) []byte {
	o := cardOpen(dst, '{')
	o.raw("name", c.name.Raw)
	o.raw("description", cardStringOr(c.description, `""`))
	o.key("supportedInterfaces")
	a := cardOpen(o.buf, '[')
	for _, version := range []string{"1.0", "0.3"} {
		a.elem()
		i := cardOpen(a.buf, '{')
		i.str("url", c.url)
		i.raw("protocolBinding", cardJSONRPC.Raw)
		i.str("protocolVersion", version)
		a.buf = i.close()
	}
	o.buf = a.close()
	if cardProviderPresent(c.provider) {
		o.key("provider")
		o.buf = cardAppendProvider(o.buf, c.provider)
	}
	o.raw("version", cardStringOr(c.version, `""`))
	o.optionalString("documentationUrl", c.documentationURL)
	o.key("capabilities")
	o.buf = cardAppendCapabilities(o.buf, cardField(c.root, "capabilities"), c.extended, f)
	o.securitySchemes(c.schemes, f)
	o.requirements("securityRequirements", c.requirements, true)
	c.appendModesAndSkills(&o)
	o.optionalString("iconUrl", c.iconURL)
	if f == cardHybrid {
		o.str("url", c.url)
		o.raw("preferredTransport", cardJSONRPC.Raw)
		o.raw("protocolVersion", `"0.3.0"`)
		o.additionalInterfaces(c.url)
		if c.extended.Exists() {
			o.raw("supportsAuthenticatedExtendedCard", c.extended.Raw)
		}
		o.requirements("security", c.requirements, false)
	}
	return o.close()
}

// appendCommonTail writes the 0.x card fields that follow the interface fields.
func (c *cardPublished) appendCommonTail(o *cardWriter, f cardForm) {
	if cardProviderPresent(c.provider) {
		o.key("provider")
		o.buf = cardAppendProvider(o.buf, c.provider)
	}
	o.optionalString("iconUrl", c.iconURL)
	o.optionalString("documentationUrl", c.documentationURL)
	o.key("capabilities")
	o.buf = cardAppendCapabilities(o.buf, cardField(c.root, "capabilities"), c.extended, f)
	o.securitySchemes(c.schemes, f)
	o.requirements("security", c.requirements, false)
	c.appendModesAndSkills(o)
}

// appendModesAndSkills writes the default modes and the skills, without
// per-skill security: it named the backend's schemes, which are not published.
func (c *cardPublished) appendModesAndSkills(o *cardWriter) {
	o.key("defaultInputModes")
	o.buf = cardAppendStrings(o.buf, cardField(c.root, "defaultInputModes"))
	o.key("defaultOutputModes")
	o.buf = cardAppendStrings(o.buf, cardField(c.root, "defaultOutputModes"))
	o.key("skills")
	o.buf = cardAppendSkills(o.buf, c.skills, false)
}

// --- JSON writing

// cardWriter appends one JSON object or array to buf, member by member.
// Nested values are written by opening another cardWriter on w.buf and
// assigning its close() back to w.buf.
type cardWriter struct {
	buf   []byte
	end   byte
	empty bool
}

// cardMark is a point to roll a writer back to.
type cardMark struct {
	n     int
	empty bool
}

func cardOpen(dst []byte, open byte) cardWriter {
	end := byte('}')
	if open == '[' {
		end = ']'
	}
	return cardWriter{buf: append(dst, open), end: end, empty: true}
}

func (w *cardWriter) close() []byte { return append(w.buf, w.end) }

func (w *cardWriter) mark() cardMark { return cardMark{len(w.buf), w.empty} }

func (w *cardWriter) rollback(m cardMark) { w.buf, w.empty = w.buf[:m.n], m.empty }

// elem starts an array element.
func (w *cardWriter) elem() {
	if !w.empty {
		w.buf = append(w.buf, ',')
	}
	w.empty = false
}

// key starts a member named by a constant.
func (w *cardWriter) key(k string) {
	w.elem()
	w.buf = gjson.AppendJSONString(w.buf, k)
	w.buf = append(w.buf, ':')
}

// rawKey starts a member whose name is raw JSON copied from the input.
func (w *cardWriter) rawKey(raw string) {
	w.elem()
	w.buf = append(w.buf, raw...)
	w.buf = append(w.buf, ':')
}

func (w *cardWriter) raw(k, v string) {
	w.key(k)
	w.buf = append(w.buf, v...)
}

func (w *cardWriter) str(k, v string) {
	w.key(k)
	w.buf = gjson.AppendJSONString(w.buf, v)
}

func (w *cardWriter) optionalString(k string, v gjson.Result) {
	if cardNonEmptyString(v) {
		w.raw(k, v.Raw)
	}
}

func (w *cardWriter) optionalBool(k string, v gjson.Result) {
	if cardIsBool(v) {
		w.raw(k, v.Raw)
	}
}

func (w *cardWriter) optionalStrings(k string, v gjson.Result) {
	m := w.mark()
	w.key(k)
	before := len(w.buf)
	w.buf = cardAppendStrings(w.buf, v)
	if len(w.buf)-before == len("[]") {
		w.rollback(m)
	}
}

func (w *cardWriter) securitySchemes(schemes gjson.Result, f cardForm) {
	m := w.mark()
	w.key("securitySchemes")
	var n int
	w.buf, n = cardAppendSchemes(w.buf, schemes, f)
	if n == 0 {
		w.rollback(m)
	}
}

func (w *cardWriter) requirements(k string, reqs gjson.Result, v10 bool) {
	m := w.mark()
	w.key(k)
	var n int
	w.buf, n = cardAppendRequirements(w.buf, reqs, v10)
	if n == 0 {
		w.rollback(m)
	}
}

// additionalInterfaces writes the 0.3 list, repeating the main url as the
// 0.3 schema recommends.
func (w *cardWriter) additionalInterfaces(u string) {
	w.key("additionalInterfaces")
	a := cardOpen(w.buf, '[')
	a.elem()
	o := cardOpen(a.buf, '{')
	o.str("url", u)
	o.raw("transport", cardJSONRPC.Raw)
	a.buf = o.close()
	w.buf = a.close()
}

// --- reading helpers

// cardField returns obj's member camel, or its snake_case spelling, which
// ProtoJSON parsers must also accept (a2a-python emits it on request).
// camel is always a constant, never input, so it is a safe gjson path.
func cardField(obj gjson.Result, camel string) gjson.Result {
	if !obj.IsObject() {
		return gjson.Result{}
	}
	if r := obj.Get(camel); r.Exists() {
		return r
	}
	if snake := cardSnake(camel); snake != camel {
		return obj.Get(snake)
	}
	return gjson.Result{}
}

func cardSnake(camel string) string {
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

func cardNonEmptyString(v gjson.Result) bool { return v.Type == gjson.String && v.Str != "" }

func cardIsBool(v gjson.Result) bool { return v.Type == gjson.True || v.Type == gjson.False }

// cardStringOr returns v as raw JSON when it is a string, else def.
func cardStringOr(v gjson.Result, def string) string {
	if v.Type == gjson.String {
		return v.Raw
	}
	return def
}

func cardHasElements(v gjson.Result) bool {
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

// cardSeen records name and reports whether it was already recorded: on a
// duplicate key the first member wins, as gjson reads it.
func cardSeen(seen *[]string, name string) bool {
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
