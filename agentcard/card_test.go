package agentcard

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/testfiles"
)

// updateCards rewrites the card goldens: go test ./agentcard -update-cards
var updateCards = flag.Bool("update-cards", false, "rewrite the golden files under testdata/card")

const (
	cardTestURL     = "https://gateway.example.com/agents/demo"
	cardTestGRPCURL = "gateway.example.com:443"
	// cardBackendHost appears in every backend endpoint of the inputs and must
	// not survive into a published card.
	cardBackendHost = "backend.internal"
)

// cardRenderers are the published forms, by golden file suffix.
var cardRenderers = []struct {
	suffix string
	render func([]byte, PublishOptions) ([]byte, error)
}{
	{"v025", V025},
	{"v03", V03},
	{"v10", V10},
	{"hybrid", Hybrid},
}

// cardCase is one golden input with the publishing settings its outputs use.
type cardCase struct {
	name    string
	card    []byte
	publish PublishOptions
}

// cardCases reads testdata/card/*.card.json. A sibling NAME.publish.json sets
// the PublishOptions (URL is always cardTestURL, GRPCURL cardTestGRPCURL;
// Bindings, by config name, default to all three); without one the card is
// published with Bearer, ExtendedCard and every binding.
func cardCases(t testing.TB) []cardCase {
	t.Helper()
	paths := testfiles.Glob(t, "testdata", "card", "*.card.json")
	var cases []cardCase
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".card.json")
		card, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c := cardCase{name: name, card: card, publish: PublishOptions{URL: cardTestURL, GRPCURL: cardTestGRPCURL, Bindings: dialect.Bindings, Bearer: true, ExtendedCard: true}}
		if raw, err := os.ReadFile(filepath.Join("testdata", "card", name+".publish.json")); err == nil {
			var pf struct {
				Bearer, ExtendedCard bool
				Bindings             []string
				Overrides            struct {
					Name, Description, IconURL, DocumentationURL string
					Provider                                     *Provider
					Skills                                       json.RawMessage
				}
			}
			if err := json.Unmarshal(raw, &pf); err != nil {
				t.Fatalf("%s.publish.json: %v", name, err)
			}
			bindings := dialect.Bindings
			if pf.Bindings != nil {
				bindings = nil
				for _, n := range pf.Bindings {
					b, ok := dialect.ParseBinding(n)
					if !ok {
						t.Fatalf("%s.publish.json: unknown binding %q", name, n)
					}
					bindings = append(bindings, b)
				}
			}
			c.publish = PublishOptions{
				URL: cardTestURL, GRPCURL: cardTestGRPCURL, Bindings: bindings, Bearer: pf.Bearer, ExtendedCard: pf.ExtendedCard,
				Overrides: Overrides{
					Name: pf.Overrides.Name, Description: pf.Overrides.Description,
					IconURL: pf.Overrides.IconURL, DocumentationURL: pf.Overrides.DocumentationURL,
					Provider: pf.Overrides.Provider, Skills: pf.Overrides.Skills,
				},
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	return cases
}

func TestCardGolden(t *testing.T) {
	for _, c := range cardCases(t) {
		t.Run(c.name, func(t *testing.T) {
			canon, err := ToCanonical(c.card)
			if err != nil {
				t.Fatalf("ToCanonical: %v", err)
			}
			cardCheckGolden(t, c.name+".canon.json", canon)
			for _, r := range cardRenderers {
				out, err := r.render(canon, c.publish)
				if err != nil {
					t.Fatalf("Card %s: %v", r.suffix, err)
				}
				cardCheckGolden(t, c.name+"."+r.suffix+".json", out)
			}
		})
	}
}

// cardCheckGolden compares got with testdata/card/name as JSON values, or
// rewrites the file (indented) under -update-cards.
func cardCheckGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	if !json.Valid(got) {
		t.Fatalf("%s: output is not valid JSON:\n%s", name, got)
	}
	path := filepath.Join("testdata", "card", name)
	if *updateCards {
		var pretty bytes.Buffer
		if err := json.Indent(&pretty, got, "", "  "); err != nil {
			t.Fatal(err)
		}
		pretty.WriteByte('\n')
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-cards to create it)", err)
	}
	if !cardJSONEqual(t, want, got) {
		t.Errorf("%s mismatch:\nwant: %s\ngot:  %s", name, bytes.Join(bytes.Fields(want), nil), got)
	}
}

func cardJSONEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(cardDecode(t, a), cardDecode(t, b))
}

func cardDecode(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// TestCardProperties checks, for every golden input, what must hold whatever
// the goldens say.
func TestCardProperties(t *testing.T) {
	shapes := cardShapes()
	for _, c := range cardCases(t) {
		t.Run(c.name, func(t *testing.T) {
			canon, err := ToCanonical(c.card)
			if err != nil {
				t.Fatal(err)
			}
			if again, _ := ToCanonical(c.card); !bytes.Equal(again, canon) {
				t.Errorf("ToCanonical is not deterministic:\n%s\n%s", canon, again)
			}
			if again, err := ToCanonical(canon); err != nil || !bytes.Equal(again, canon) {
				t.Errorf("ToCanonical(canonical) = %s, %v; want it unchanged:\n%s", again, err, canon)
			}
			v1, _, err1 := Dialect(c.card)
			v2, _, err2 := Dialect(canon)
			if v1 != v2 || (err1 == nil) != (err2 == nil) {
				t.Errorf("Dialect(card) = %q, %v but Dialect(canonical) = %q, %v", v1, err1, v2, err2)
			}
			if bytes.Contains(canon, []byte(`"signatures"`)) {
				t.Errorf("canonical card kept signatures")
			}
			cardCheckShape(t.Errorf, "canonical", cardDecode(t, canon), shapes["v10"])

			outputs := map[string][]byte{}
			for _, r := range cardRenderers {
				out, err := r.render(canon, c.publish)
				if err != nil {
					t.Fatalf("%s: %v", r.suffix, err)
				}
				if again, _ := r.render(canon, c.publish); !bytes.Equal(again, out) {
					t.Errorf("%s is not deterministic", r.suffix)
				}
				outputs[r.suffix] = out
				cardCheckPublished(t, r.suffix, out, c.publish)
				cardCheckShape(t.Errorf, r.suffix, cardDecode(t, out), shapes[r.suffix])
			}
			// The hybrid card carries the whole 1.0 card: reading it back must
			// give what reading the pure 1.0 card gives, but for the 0.3
			// interface only the hybrid card lists.
			fromHybrid, err := ToCanonical(outputs["hybrid"])
			if err != nil {
				t.Fatal(err)
			}
			fromV10, err := ToCanonical(outputs["v10"])
			if err != nil {
				t.Fatal(err)
			}
			fromHybrid = without03Interface(t, fromHybrid)
			if !cardJSONEqual(t, fromHybrid, fromV10) {
				t.Errorf("hybrid and v10 read back differently:\n%s\n%s", fromHybrid, fromV10)
			}
		})
	}
}

// without03Interface drops the JSONRPC 0.3 entry of a canonical card's
// supportedInterfaces.
func without03Interface(t *testing.T, canon []byte) []byte {
	t.Helper()
	var card map[string]any
	if err := json.Unmarshal(canon, &card); err != nil {
		t.Fatal(err)
	}
	ifaces, _ := card["supportedInterfaces"].([]any)
	kept := []any{}
	for _, it := range ifaces {
		if m, _ := it.(map[string]any); m["protocolVersion"] != "0.3" {
			kept = append(kept, it)
		}
	}
	card["supportedInterfaces"] = kept
	out, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cardCheckPublished checks the publishing rules on one output.
func cardCheckPublished(t *testing.T, form string, out []byte, p PublishOptions) {
	t.Helper()
	if bytes.Contains(out, []byte(cardBackendHost)) {
		t.Errorf("%s leaks a backend URL: %s", form, out)
	}
	root := gjson.ParseBytes(out)
	wantURL := func(binding string) string {
		if binding == "GRPC" {
			return p.GRPCURL
		}
		return p.URL
	}
	served := servedInterfaces(p)
	var wantBindings []string
	for _, it := range served {
		wantBindings = append(wantBindings, it.binding.CardName())
	}
	if u, b := root.Get("url"), root.Get("preferredTransport"); u.Exists() && (b.String() != wantBindings[0] || u.String() != wantURL(b.String())) {
		t.Errorf("%s: main interface %s at %s, want the first binding served, %s at %s", form, b.Raw, u.Raw, wantBindings[0], wantURL(wantBindings[0]))
	}
	check := func(list, bindingKey string, versions []string) {
		var got, want []string
		for _, it := range root.Get(list).Array() {
			b := it.Get(bindingKey).String()
			got = append(got, b+" "+it.Get("protocolVersion").String())
			if it.Get("url").String() != wantURL(b) {
				t.Errorf("%s: %s %s at %s, want %s", form, list, b, it.Get("url").Raw, wantURL(b))
			}
		}
		for _, v := range versions {
			for _, b := range wantBindings {
				want = append(want, b+" "+v)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %s %q, want %q", form, list, got, want)
		}
	}
	switch form {
	case "v03":
		check("additionalInterfaces", "transport", []string{""})
	case "hybrid":
		check("additionalInterfaces", "transport", []string{""})
		check("supportedInterfaces", "protocolBinding", []string{"1.0", "0.3"})
	case "v10":
		check("supportedInterfaces", "protocolBinding", []string{"1.0"})
	}
	ifaces := root.Get("supportedInterfaces.#(protocolBinding==JSONRPC)#.protocolVersion").Array()
	switch form {
	case "v025", "v03":
		for _, k := range []string{"name", "description", "version", "url", "protocolVersion", "capabilities", "defaultInputModes", "defaultOutputModes", "skills"} {
			if !root.Get(k).Exists() {
				t.Errorf("%s lacks required key %q", form, k)
			}
		}
		if want := map[string]string{"v025": "0.2.5", "v03": "0.3.0"}[form]; root.Get("protocolVersion").String() != want {
			t.Errorf("%s: protocolVersion %s, want %s", form, root.Get("protocolVersion").Raw, want)
		}
		if got := root.Get("supportsAuthenticatedExtendedCard").Bool(); got != p.ExtendedCard {
			t.Errorf("%s: supportsAuthenticatedExtendedCard %v, want %v", form, got, p.ExtendedCard)
		}
	case "v10":
		if served[0].binding == dialect.JSONRPC && (len(ifaces) != 1 || ifaces[0].String() != "1.0") {
			t.Errorf("%s: JSONRPC interface versions %v, want [1.0]: a pure 1.0 card", form, ifaces)
		}
		fallthrough
	case "hybrid":
		if form == "hybrid" && served[0].binding == dialect.JSONRPC && (len(ifaces) != 2 || ifaces[0].String() != "1.0" || ifaces[1].String() != "0.3") {
			t.Errorf("%s: JSONRPC interface versions %v, want [1.0 0.3]", form, ifaces)
		}
		if got := root.Get("capabilities.extendedAgentCard").Bool(); got != p.ExtendedCard {
			t.Errorf("%s: capabilities.extendedAgentCard %v, want %v", form, got, p.ExtendedCard)
		}
	}
	if form == "hybrid" && root.Get("protocolVersion").String() != "0.3.0" {
		t.Errorf("hybrid: protocolVersion %s, want 0.3.0", root.Get("protocolVersion").Raw)
	}
	hasSecurity := root.Get("securitySchemes").Exists() || root.Get("security").Exists() || root.Get("securityRequirements").Exists()
	if hasSecurity != p.Bearer {
		t.Errorf("%s: has security %v, want %v (Bearer)", form, hasSecurity, p.Bearer)
	}
	if p.Bearer {
		schemes := root.Get("securitySchemes").Map()
		if len(schemes) != 1 || schemes["bearer"].Get("httpAuthSecurityScheme.bearerFormat").String() != "JWT" &&
			schemes["bearer"].Get("bearerFormat").String() != "JWT" {
			t.Errorf("%s: securitySchemes %s, want only the gateway's bearer JWT", form, root.Get("securitySchemes").Raw)
		}
	}
	for _, skill := range root.Get("skills").Array() {
		if skill.Get("security").Exists() || skill.Get("securityRequirements").Exists() {
			t.Errorf("%s: skill %s keeps the backend's per-skill security", form, skill.Get("id").Raw)
		}
	}
}

// cardShape is what a dialect allows at one place in a card.
type cardShape struct {
	keys   map[string]*cardShape // an object with these members; a nil shape is a scalar or a list of scalars
	elem   *cardShape            // an array of these
	values *cardShape            // with isMap: an object with free keys and values of this shape
	isMap  bool
	byType map[string]*cardShape // a 0.x security scheme: the members depend on "type"
	any    bool                  // free JSON (google.protobuf.Struct)
}

func shapeObj(keys map[string]*cardShape) *cardShape { return &cardShape{keys: keys} }
func shapeArr(elem *cardShape) *cardShape            { return &cardShape{elem: elem} }
func shapeMap(values *cardShape) *cardShape          { return &cardShape{values: values, isMap: true} }

// shapeLeaves is an object whose members are all scalars or lists of scalars.
func shapeLeaves(keys ...string) *cardShape {
	m := map[string]*cardShape{}
	for _, k := range keys {
		m[k] = nil
	}
	return shapeObj(m)
}

func shapeWith(s *cardShape, extra map[string]*cardShape) *cardShape {
	m := map[string]*cardShape{}
	for k, v := range s.keys {
		m[k] = v
	}
	for k, v := range extra {
		m[k] = v
	}
	return shapeObj(m)
}

// cardShapes returns the key sets of the 0.2.5 and 0.3 JSON schemas and of
// the 1.0 proto, by renderer suffix; "hybrid" allows the union of 0.3 and 1.0.
func cardShapes() map[string]*cardShape {
	ext := shapeObj(map[string]*cardShape{"uri": nil, "description": nil, "required": nil, "params": {any: true}})
	signatures := shapeArr(shapeObj(map[string]*cardShape{"protected": nil, "signature": nil, "header": {any: true}}))
	scopes := shapeMap(nil)
	flow := func(keys ...string) *cardShape {
		return shapeWith(shapeLeaves(keys...), map[string]*cardShape{"scopes": scopes})
	}

	req10 := shapeArr(shapeObj(map[string]*cardShape{"schemes": shapeMap(shapeLeaves("list"))}))
	v10 := shapeObj(map[string]*cardShape{
		"name": nil, "description": nil, "version": nil, "documentationUrl": nil, "iconUrl": nil,
		"defaultInputModes": nil, "defaultOutputModes": nil,
		"supportedInterfaces": shapeArr(shapeLeaves("url", "protocolBinding", "tenant", "protocolVersion")),
		"provider":            shapeLeaves("url", "organization"),
		"capabilities":        shapeObj(map[string]*cardShape{"streaming": nil, "pushNotifications": nil, "extendedAgentCard": nil, "extensions": shapeArr(ext)}),
		"securitySchemes": shapeMap(shapeObj(map[string]*cardShape{
			"apiKeySecurityScheme":   shapeLeaves("description", "location", "name"),
			"httpAuthSecurityScheme": shapeLeaves("description", "scheme", "bearerFormat"),
			"oauth2SecurityScheme": shapeObj(map[string]*cardShape{"description": nil, "oauth2MetadataUrl": nil, "flows": shapeObj(map[string]*cardShape{
				"authorizationCode": flow("authorizationUrl", "tokenUrl", "refreshUrl", "pkceRequired"),
				"clientCredentials": flow("tokenUrl", "refreshUrl"),
				"implicit":          flow("authorizationUrl", "refreshUrl"),
				"password":          flow("tokenUrl", "refreshUrl"),
				"deviceCode":        flow("deviceAuthorizationUrl", "tokenUrl", "refreshUrl"),
			})}),
			"openIdConnectSecurityScheme": shapeLeaves("description", "openIdConnectUrl"),
			"mtlsSecurityScheme":          shapeLeaves("description"),
		})),
		"securityRequirements": req10,
		"skills": shapeArr(shapeObj(map[string]*cardShape{
			"id": nil, "name": nil, "description": nil, "tags": nil, "examples": nil, "inputModes": nil, "outputModes": nil,
			"securityRequirements": req10,
		})),
		"signatures": signatures,
	})

	v0x := func(is03 bool) *cardShape {
		req := shapeArr(shapeMap(nil))
		oauth := map[string]*cardShape{"type": nil, "description": nil, "flows": shapeObj(map[string]*cardShape{
			"authorizationCode": flow("authorizationUrl", "tokenUrl", "refreshUrl"),
			"clientCredentials": flow("tokenUrl", "refreshUrl"),
			"implicit":          flow("authorizationUrl", "refreshUrl"),
			"password":          flow("tokenUrl", "refreshUrl"),
		})}
		schemes := map[string]*cardShape{
			"apiKey":        shapeLeaves("type", "description", "in", "name"),
			"http":          shapeLeaves("type", "description", "scheme", "bearerFormat"),
			"openIdConnect": shapeLeaves("type", "description", "openIdConnectUrl"),
		}
		skill := map[string]*cardShape{"id": nil, "name": nil, "description": nil, "tags": nil, "examples": nil, "inputModes": nil, "outputModes": nil}
		card := map[string]*cardShape{
			"name": nil, "description": nil, "version": nil, "url": nil, "preferredTransport": nil, "protocolVersion": nil,
			"documentationUrl": nil, "iconUrl": nil, "defaultInputModes": nil, "defaultOutputModes": nil,
			"supportsAuthenticatedExtendedCard": nil,
			"additionalInterfaces":              shapeArr(shapeLeaves("url", "transport")),
			"provider":                          shapeLeaves("organization", "url"),
			"capabilities":                      shapeObj(map[string]*cardShape{"streaming": nil, "pushNotifications": nil, "stateTransitionHistory": nil, "extensions": shapeArr(ext)}),
			"security":                          req,
		}
		if is03 {
			oauth["oauth2MetadataUrl"] = nil
			schemes["mutualTLS"] = shapeLeaves("type", "description")
			skill["security"] = req
			card["signatures"] = signatures
		}
		schemes["oauth2"] = shapeObj(oauth)
		card["securitySchemes"] = shapeMap(&cardShape{byType: schemes})
		card["skills"] = shapeArr(shapeObj(skill))
		return shapeObj(card)
	}
	return map[string]*cardShape{"v10": v10, "v03": v0x(true), "v025": v0x(false), "hybrid": cardMergeShapes(v0x(true), v10)}
}

// cardMergeShapes allows what a or b allows. A 0.x scheme merged with a 1.0
// scheme allows the 1.0 wrappers beside each type's members.
func cardMergeShapes(a, b *cardShape) *cardShape {
	if a == nil || b == nil {
		if a == nil {
			return b
		}
		return a
	}
	out := &cardShape{any: a.any || b.any, elem: cardMergeShapes(a.elem, b.elem), values: cardMergeShapes(a.values, b.values), isMap: a.isMap || b.isMap}
	switch {
	case a.byType != nil && b.keys != nil:
		out.byType = map[string]*cardShape{}
		for typ, s := range a.byType {
			out.byType[typ] = cardMergeShapes(s, shapeObj(b.keys))
		}
		return out
	case a.keys != nil || b.keys != nil:
		out.keys = map[string]*cardShape{}
		for k, v := range a.keys {
			out.keys[k] = v
		}
		for k, v := range b.keys {
			if av, ok := out.keys[k]; ok {
				out.keys[k] = cardMergeShapes(av, v)
			} else {
				out.keys[k] = v
			}
		}
	}
	return out
}

// cardCheckShape reports every member of v the shape s does not allow.
func cardCheckShape(report func(string, ...any), path string, v any, s *cardShape) {
	m, isObj := v.(map[string]any)
	switch {
	case s == nil:
		list, _ := v.([]any)
		if isObj {
			report("%s: object where the dialect has a scalar", path)
		}
		for _, e := range list {
			switch e.(type) {
			case map[string]any, []any:
				report("%s: nested value where the dialect has a list of scalars", path)
			}
		}
	case s.any:
	case s.elem != nil:
		list, ok := v.([]any)
		if !ok {
			report("%s: want an array", path)
		}
		for i, e := range list {
			cardCheckShape(report, fmt.Sprintf("%s[%d]", path, i), e, s.elem)
		}
	case !isObj:
		report("%s: want an object", path)
	case s.isMap:
		for k, e := range m {
			cardCheckShape(report, path+"."+k, e, s.values)
		}
	case s.byType != nil:
		typ, _ := m["type"].(string)
		sub, ok := s.byType[typ]
		if !ok {
			report("%s: security scheme type %q is not part of this dialect", path, typ)
			return
		}
		cardCheckShape(report, path, v, sub)
	default:
		for k, e := range m {
			sub, ok := s.keys[k]
			if !ok {
				report("%s: key %q is not part of this dialect", path, k)
				continue
			}
			cardCheckShape(report, path+"."+k, e, sub)
		}
	}
}

// TestCardShapeCheckerFails makes sure the shape checks above can fail.
func TestCardShapeCheckerFails(t *testing.T) {
	shapes := cardShapes()
	for _, tt := range []struct{ form, card string }{
		{"v10", `{"name":"a","url":"https://x"}`},
		{"v10", `{"name":"a","securitySchemes":{"s":{"type":"http","scheme":"bearer"}}}`},
		{"v03", `{"name":"a","supportedInterfaces":[]}`},
		{"v03", `{"name":"a","capabilities":{"extendedAgentCard":true}}`},
		{"v025", `{"name":"a","securitySchemes":{"m":{"type":"mutualTLS"}}}`},
		{"v025", `{"name":"a","skills":[{"id":"s","security":[]}]}`},
		{"hybrid", `{"name":"a","securitySchemes":{"s":{"type":"http","location":"header"}}}`},
	} {
		failed := false
		cardCheckShape(func(string, ...any) { failed = true }, "", cardDecode(t, []byte(tt.card)), shapes[tt.form])
		if !failed {
			t.Errorf("%s shape accepted %s", tt.form, tt.card)
		}
	}
}

func TestCardDialect(t *testing.T) {
	tests := []struct {
		name, card string
		want       dialect.Version
		reason     string // substring
	}{
		{"0.2.5", `{"name":"a","url":"https://b/a2a","protocolVersion":"0.2.5"}`, dialect.Version025, `protocolVersion "0.2.5" with JSONRPC at "https://b/a2a"`},
		{"0.2 without patch", `{"url":"https://b","protocolVersion":"0.2"}`, dialect.Version025, "JSONRPC"},
		{"0.3.0", `{"url":"https://b","protocolVersion":"0.3.0"}`, dialect.Version03, `"0.3.0"`},
		{"0.3 with JSONRPC only in additionalInterfaces", `{"url":"https://b/grpc","preferredTransport":"GRPC","protocolVersion":"0.3.0","additionalInterfaces":[{"url":"https://b/rpc","transport":"JSONRPC"}]}`, dialect.Version03, `JSONRPC at "https://b/rpc"`},
		{"no protocolVersion", `{"url":"https://b/x"}`, dialect.Version03, "0.3 (the 0.3 schema default) is assumed"},
		{"1.0", `{"supportedInterfaces":[{"url":"https://b/v1","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, dialect.Version10, `supportedInterfaces lists JSONRPC "1.0" at "https://b/v1"`},
		{"1.0.1", `{"supportedInterfaces":[{"url":"https://b/v1","protocolBinding":"JSONRPC","protocolVersion":"1.0.1"}]}`, dialect.Version10, "1.0.1"},
		{"1.0 after 0.3 in the list", `{"supportedInterfaces":[{"url":"https://b/old","protocolBinding":"JSONRPC","protocolVersion":"0.3"},{"url":"https://b/new","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, dialect.Version10, "https://b/new"},
		{"1.0 only over GRPC, 0.3 over JSONRPC", `{"supportedInterfaces":[{"url":"https://b/g","protocolBinding":"GRPC","protocolVersion":"1.0"},{"url":"https://b/r","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}`, dialect.Version03, `JSONRPC "0.3" at "https://b/r"`},
		{"hybrid: supportedInterfaces beat top-level fields", `{"url":"https://b/old","protocolVersion":"1.0","supportedInterfaces":[{"url":"https://b/r","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}`, dialect.Version03, "supportedInterfaces"},
		{"python hybrid", `{"url":"https://b","protocolVersion":"0.3.0","supportedInterfaces":[{"url":"https://b","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, dialect.Version10, "1.0"},
		{"tenant", `{"supportedInterfaces":[{"url":"https://b","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":"acme"}]}`, dialect.Version10, `for tenant "acme"`},
		{"snake_case", `{"supported_interfaces":[{"url":"https://b","protocol_binding":"JSONRPC","protocol_version":"1.0"}]}`, dialect.Version10, "1.0"},
		{"empty supportedInterfaces falls back to url", `{"supportedInterfaces":[],"url":"https://b","protocolVersion":"0.3.0"}`, dialect.Version03, "0.3.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason, err := Dialect([]byte(tt.card))
			if err != nil || got != tt.want || !strings.Contains(reason, tt.reason) {
				t.Errorf("Dialect(%s) = %q, %q, %v; want %q, reason containing %q", tt.card, got, reason, err, tt.want, tt.reason)
			}
		})
	}
	for _, card := range []string{
		``, `{`, `[]`, `"card"`, `{}`,
		`{"name":"no interface"}`,
		`{"url":"https://b","protocolVersion":"2.0"}`,
		`{"url":"https://b","protocolVersion":"1.01"}`,
		`{"url":"https://b","protocolVersion":"0.3.0","preferredTransport":"GRPC"}`,
		`{"supportedInterfaces":[{"url":"https://b","protocolBinding":"GRPC","protocolVersion":"1.0"}],"url":"https://b","protocolVersion":"0.3.0"}`,
		`{"supportedInterfaces":[{"url":"https://b","protocolBinding":"JSONRPC"}]}`,
		`{"supportedInterfaces":[42]}`,
		"{\"url\":\"https://b\",\"protocolVersion\":\"0.3.0\",\"name\":\"\xff\"}",
	} {
		if v, reason, err := Dialect([]byte(card)); !errors.Is(err, errInvalid) {
			t.Errorf("Dialect(%s) = %q, %q, %v; want errInvalid", card, v, reason, err)
		}
	}
}

func TestCardToCanonicalErrors(t *testing.T) {
	for _, card := range []string{``, `{"name":"a"`, `[]`, `"card"`, `null`, `{}`, `{"name":5}`, `{"name":""}`, `{"description":"no name"}`, "{\"name\":\"a\xc3\"}"} {
		if out, err := ToCanonical([]byte(card)); !errors.Is(err, errInvalid) {
			t.Errorf("ToCanonical(%s) = %s, %v; want errInvalid", card, out, err)
		}
	}
}

func TestCardRenderErrors(t *testing.T) {
	canon := []byte(`{"name":"a"}`)
	ok := PublishOptions{URL: cardTestURL}
	tests := []struct {
		name  string
		canon []byte
		p     PublishOptions
	}{
		{"invalid canonical", []byte(`{"name":`), ok},
		{"canonical not an object", []byte(`[]`), ok},
		{"canonical without name", []byte(`{"description":"x"}`), ok},
		{"empty url", canon, PublishOptions{}},
		{"relative url", canon, PublishOptions{URL: "/agents/a"}},
		{"not http", canon, PublishOptions{URL: "ftp://gateway.example.com/a"}},
		{"unparsable url", canon, PublishOptions{URL: "https://gate way/%zz"}},
		{"skills not JSON", canon, PublishOptions{URL: cardTestURL, Overrides: Overrides{Skills: []byte(`[`)}}},
		{"skills empty bytes", canon, PublishOptions{URL: cardTestURL, Overrides: Overrides{Skills: []byte{}}}},
		{"skills not an array", canon, PublishOptions{URL: cardTestURL, Overrides: Overrides{Skills: []byte(`{"id":"s"}`)}}},
		{"skill not an object", canon, PublishOptions{URL: cardTestURL, Overrides: Overrides{Skills: []byte(`[{"id":"s"},"t"]`)}}},
	}
	for _, tt := range tests {
		for _, r := range cardRenderers {
			if out, err := r.render(tt.canon, tt.p); err == nil {
				t.Errorf("%s: Card %s = %s, want an error", tt.name, r.suffix, out)
			}
		}
	}
	// A canonical card whose name an override supplies is fine.
	if _, err := V10([]byte(`{}`), PublishOptions{URL: cardTestURL, Overrides: Overrides{Name: "n"}}); err != nil {
		t.Errorf("name from override: %v", err)
	}
}

func TestCardOverrides(t *testing.T) {
	canon, err := ToCanonical([]byte(`{
		"name":"Backend","description":"backend text","iconUrl":"https://b/icon","documentationUrl":"https://b/docs",
		"provider":{"organization":"Backend Org","url":"https://b"},"url":"https://backend.internal/a2a",
		"skills":[{"id":"old","name":"Old","description":"d","tags":[]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := PublishOptions{URL: cardTestURL, Overrides: Overrides{
		Name: "Gateway \"Agent\"", Description: "<b>façade</b> & more", IconURL: "https://p/icon", DocumentationURL: "https://p/docs",
		Provider: &Provider{Organization: "Platform", URL: "https://p"},
		Skills:   []byte(`[{"id":"new","name":"New","description":"n","tags":["t"],"x-private":1,"security":[{"k":[]}]}]`),
	}}
	for _, r := range cardRenderers {
		out, err := r.render(canon, p)
		if err != nil {
			t.Fatal(err)
		}
		root := gjson.ParseBytes(out)
		for path, want := range map[string]string{
			"name": p.Overrides.Name, "description": p.Overrides.Description, "iconUrl": p.Overrides.IconURL,
			"documentationUrl": p.Overrides.DocumentationURL, "provider.organization": "Platform", "provider.url": "https://p",
			"skills.#": "1", "skills.0.id": "new", "skills.0.tags.0": "t",
		} {
			if got := root.Get(path).String(); got != want {
				t.Errorf("%s: %s = %q, want %q", r.suffix, path, got, want)
			}
		}
		for _, path := range []string{"skills.0.x-private", "skills.0.security", "skills.0.securityRequirements"} {
			if root.Get(path).Exists() {
				t.Errorf("%s: %s survived the skills override", r.suffix, path)
			}
		}
	}
	// Empty overrides keep the backend's values.
	out, err := V03(canon, PublishOptions{URL: cardTestURL})
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(out, "description").String(); got != "backend text" {
		t.Errorf("description = %q without override, want the backend's", got)
	}
}

// TestCardPreservesRawText proves strings are copied, not re-encoded.
func TestCardPreservesRawText(t *testing.T) {
	card := []byte(`{"name":"Caf\u00e9 \"Agent\"","description":"line\nbreak \ud83d\ude00","url":"https://b","version":"1"}`)
	canon, err := ToCanonical(card)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{`"Caf\u00e9 \"Agent\""`, `"line\nbreak \ud83d\ude00"`} {
		if !bytes.Contains(canon, []byte(raw)) {
			t.Errorf("canonical card lost %s: %s", raw, canon)
		}
	}
}

func TestCardHasSignatures(t *testing.T) {
	for card, want := range map[string]bool{
		`{"name":"a","signatures":[{"protected":"p","signature":"s"}]}`: true,
		`{"name":"a","signatures":[]}`:                                  false,
		`{"name":"a"}`:                                                  false,
		`{"signatures":[{"protected":"p"}]`:                             false, // invalid JSON
	} {
		if got := HasSignatures([]byte(card)); got != want {
			t.Errorf("HasSignatures(%s) = %v, want %v", card, got, want)
		}
	}
}

// TestCardCapabilities covers the extended-card flag and the dropped
// stateTransitionHistory in both directions.
func TestCardCapabilities(t *testing.T) {
	wantCanonicalMember(t, "capabilities", []cardMemberCase{
		{`{"name":"a","supportsAuthenticatedExtendedCard":true,"capabilities":{"stateTransitionHistory":true}}`, `{"extendedAgentCard":true}`},
		{`{"name":"a","supportsAuthenticatedExtendedCard":false}`, `{"extendedAgentCard":false}`},
		{`{"name":"a","supportsAuthenticatedExtendedCard":true,"capabilities":{"extendedAgentCard":false}}`, `{"extendedAgentCard":false}`},
		{`{"name":"a","capabilities":{"streaming":"yes","pushNotifications":true,"extensions":[{"uri":""},{"uri":"u","required":"no","params":[1]}]}}`,
			`{"pushNotifications":true,"extensions":[{"uri":"u"}]}`},
		{`{"name":"a","capabilities":{"extensions":[{"description":"no uri"}]}}`, `{}`},
	})
}

func TestCardInterfaces(t *testing.T) {
	wantCanonicalMember(t, "supportedInterfaces", []cardMemberCase{
		{`{"name":"a","url":"https://b/rpc","additionalInterfaces":[{"url":"https://b/rpc","transport":"JSONRPC"},{"url":"https://b/g","transport":"GRPC"},{"url":"https://b/x"}]}`,
			`[{"url":"https://b/rpc","protocolBinding":"JSONRPC","protocolVersion":"0.3"},{"url":"https://b/g","protocolBinding":"GRPC","protocolVersion":"0.3"}]`},
		{`{"name":"a","url":"https://b/g","preferredTransport":"GRPC","protocolVersion":"0.3.0"}`,
			`[{"url":"https://b/g","protocolBinding":"GRPC","protocolVersion":"0.3.0"}]`},
		{`{"name":"a","url":"https://b/old","supportedInterfaces":[{"url":"https://b/v1","protocolBinding":"JSONRPC","tenant":"t","protocolVersion":"1.0"},{"url":"","protocolBinding":"JSONRPC"},"junk"]}`,
			`[{"url":"https://b/v1","protocolBinding":"JSONRPC","tenant":"t","protocolVersion":"1.0"}]`},
		{`{"name":"a"}`, `[]`},
	})
}

// cardMemberCase is a card and the JSON of one member of its canonical
// form.
type cardMemberCase struct{ card, want string }

func wantCanonicalMember(t *testing.T, member string, cases []cardMemberCase) {
	t.Helper()
	for _, tt := range cases {
		canon, err := ToCanonical([]byte(tt.card))
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(canon, member).Raw; !cardJSONEqual(t, []byte(got), []byte(tt.want)) {
			t.Errorf("ToCanonical(%s).%s = %s, want %s", tt.card, member, got, tt.want)
		}
	}
}

func TestCardSecuritySchemes(t *testing.T) {
	forms := map[string]form{"v025": formV025, "v03": formV03, "v10": formV10, "hybrid": formHybrid}
	tests := []struct {
		name, in string
		want     map[string]string // by form; "{}" when every scheme is left out
	}{
		{
			name: "apiKey",
			in:   `{"k":{"apiKeySecurityScheme":{"description":"d","location":"cookie","name":"sid"}}}`,
			want: map[string]string{
				"v025":   `{"k":{"type":"apiKey","description":"d","in":"cookie","name":"sid"}}`,
				"v03":    `{"k":{"type":"apiKey","description":"d","in":"cookie","name":"sid"}}`,
				"v10":    `{"k":{"apiKeySecurityScheme":{"description":"d","location":"cookie","name":"sid"}}}`,
				"hybrid": `{"k":{"type":"apiKey","description":"d","in":"cookie","name":"sid","apiKeySecurityScheme":{"description":"d","location":"cookie","name":"sid"}}}`,
			},
		},
		{
			name: "0.x apiKey to 1.0",
			in:   `{"k":{"type":"apiKey","in":"header","name":"X-Key"}}`,
			want: map[string]string{"v10": `{"k":{"apiKeySecurityScheme":{"location":"header","name":"X-Key"}}}`},
		},
		{
			name: "mutualTLS is 0.3 and later",
			in:   `{"m":{"mtlsSecurityScheme":{}},"o":{"openIdConnectSecurityScheme":{"openIdConnectUrl":"https://i/.well-known"}}}`,
			want: map[string]string{
				"v025":   `{"o":{"type":"openIdConnect","openIdConnectUrl":"https://i/.well-known"}}`,
				"v03":    `{"m":{"type":"mutualTLS"},"o":{"type":"openIdConnect","openIdConnectUrl":"https://i/.well-known"}}`,
				"v10":    `{"m":{"mtlsSecurityScheme":{}},"o":{"openIdConnectSecurityScheme":{"openIdConnectUrl":"https://i/.well-known"}}}`,
				"hybrid": `{"m":{"type":"mutualTLS","mtlsSecurityScheme":{}},"o":{"type":"openIdConnect","openIdConnectUrl":"https://i/.well-known","openIdConnectSecurityScheme":{"openIdConnectUrl":"https://i/.well-known"}}}`,
			},
		},
		{
			name: "oauth2 authorization code with PKCE",
			in:   `{"o":{"oauth2SecurityScheme":{"oauth2MetadataUrl":"https://i/meta","flows":{"authorizationCode":{"authorizationUrl":"https://i/a","tokenUrl":"https://i/t","scopes":{"r":"read"},"pkceRequired":true}}}}}`,
			want: map[string]string{
				"v025": `{"o":{"type":"oauth2","flows":{"authorizationCode":{"authorizationUrl":"https://i/a","tokenUrl":"https://i/t","scopes":{"r":"read"}}}}}`,
				"v03":  `{"o":{"type":"oauth2","flows":{"authorizationCode":{"authorizationUrl":"https://i/a","tokenUrl":"https://i/t","scopes":{"r":"read"}}},"oauth2MetadataUrl":"https://i/meta"}}`,
				"v10":  `{"o":{"oauth2SecurityScheme":{"flows":{"authorizationCode":{"authorizationUrl":"https://i/a","tokenUrl":"https://i/t","scopes":{"r":"read"},"pkceRequired":true}},"oauth2MetadataUrl":"https://i/meta"}}}`,
			},
		},
		{
			name: "deviceCode has no 0.x flow",
			in:   `{"d":{"oauth2SecurityScheme":{"flows":{"deviceCode":{"deviceAuthorizationUrl":"https://i/d","tokenUrl":"https://i/t","scopes":{}}}}}}`,
			want: map[string]string{
				"v025":   `{}`,
				"v03":    `{}`,
				"hybrid": `{}`,
				"v10":    `{"d":{"oauth2SecurityScheme":{"flows":{"deviceCode":{"deviceAuthorizationUrl":"https://i/d","tokenUrl":"https://i/t"}}}}}`,
			},
		},
		{
			name: "several 0.x flows keep the first of authorizationCode, clientCredentials, implicit, password",
			in: `{"a":{"type":"oauth2","flows":{"password":{"tokenUrl":"https://i/t","scopes":{}},"implicit":{"authorizationUrl":"https://i/a","scopes":{"s":"d","n":3}}}},
			      "b":{"type":"oauth2","flows":{"password":{"tokenUrl":"https://i/t","scopes":{}},"clientCredentials":{"tokenUrl":"https://i/c","refreshUrl":"https://i/r","scopes":{}}}}}`,
			want: map[string]string{
				"v10": `{"a":{"oauth2SecurityScheme":{"flows":{"implicit":{"authorizationUrl":"https://i/a","scopes":{"s":"d"}}}}},
				         "b":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"https://i/c","refreshUrl":"https://i/r"}}}}}`,
			},
		},
		{
			name: "oauth2 without a flow is left out",
			in:   `{"o":{"type":"oauth2","flows":{}},"p":{"oauth2SecurityScheme":{}}}`,
			want: map[string]string{"v10": `{}`, "v03": `{}`},
		},
		{
			name: "unknown and malformed schemes are left out",
			in:   `{"k":{"type":"kerberos"},"n":null,"s":"bearer","e":{}}`,
			want: map[string]string{"v10": `{}`, "v03": `{}`},
		},
		{
			name: "the first of duplicate names wins",
			in:   `{"h":{"httpAuthSecurityScheme":{"scheme":"basic"}},"h":{"httpAuthSecurityScheme":{"scheme":"bearer"}}}`,
			want: map[string]string{"v10": `{"h":{"httpAuthSecurityScheme":{"scheme":"basic"}}}`},
		},
		{
			name: "a hybrid scheme is read from its 1.0 wrapper",
			in:   `{"h":{"type":"http","scheme":"basic","httpAuthSecurityScheme":{"scheme":"bearer","bearerFormat":"JWT"}}}`,
			want: map[string]string{"v10": `{"h":{"httpAuthSecurityScheme":{"scheme":"bearer","bearerFormat":"JWT"}}}`},
		},
		{
			name: "snake_case wrapper and fields",
			in:   `{"h":{"http_auth_security_scheme":{"scheme":"bearer","bearer_format":"JWT"}}}`,
			want: map[string]string{"v03": `{"h":{"type":"http","scheme":"bearer","bearerFormat":"JWT"}}`},
		},
	}
	for _, tt := range tests {
		for form, want := range tt.want {
			got, n := appendSchemes(nil, gjson.Parse(tt.in), forms[form])
			if !json.Valid(got) || !cardJSONEqual(t, got, []byte(want)) {
				t.Errorf("%s, %s: got %s, want %s", tt.name, form, got, want)
			}
			if wantN := len(gjson.Parse(want).Map()); n != wantN {
				t.Errorf("%s, %s: count %d, want %d", tt.name, form, n, wantN)
			}
		}
	}
}

func TestCardRequirements(t *testing.T) {
	tests := []struct {
		name, in, v10, v0x string
	}{
		{"0.x form", `[{"a":["x"]},{"b":[],"c":["y","z"]}]`, `[{"schemes":{"a":{"list":["x"]}}},{"schemes":{"b":{},"c":{"list":["y","z"]}}}]`, `[{"a":["x"]},{"b":[],"c":["y","z"]}]`},
		{"1.0 form", `[{"schemes":{"a":{"list":["x"]}}}]`, `[{"schemes":{"a":{"list":["x"]}}}]`, `[{"a":["x"]}]`},
		{"a2a-go form without list", `[{"schemes":{"a":["x"],"b":[]}}]`, `[{"schemes":{"a":{"list":["x"]},"b":{}}}]`, `[{"a":["x"],"b":[]}]`},
		{"empty StringList", `[{"schemes":{"a":{}}}]`, `[{"schemes":{"a":{}}}]`, `[{"a":[]}]`},
		{"anonymous alternative kept", `[{},{"a":[]}]`, `[{},{"schemes":{"a":{}}}]`, `[{},{"a":[]}]`},
		{"unreadable alternative dropped, not made anonymous", `[{"a":5},{"b":[]}]`, `[{"schemes":{"b":{}}}]`, `[{"b":[]}]`},
		{"non-string scopes dropped", `[{"a":["x",3,null]}]`, `[{"schemes":{"a":{"list":["x"]}}}]`, `[{"a":["x"]}]`},
		{"first duplicate wins", `[{"a":["x"],"a":["y"]}]`, `[{"schemes":{"a":{"list":["x"]}}}]`, `[{"a":["x"]}]`},
		{"0.x scheme named schemes", `[{"schemes":["x"]}]`, `[{"schemes":{"schemes":{"list":["x"]}}}]`, `[{"schemes":["x"]}]`},
		{"not a list", `{"a":[]}`, `[]`, `[]`},
		{"junk elements", `[1,"a",null]`, `[]`, `[]`},
	}
	for _, tt := range tests {
		for _, form := range []struct {
			v10  bool
			want string
		}{{true, tt.v10}, {false, tt.v0x}} {
			got, n := appendRequirements(nil, gjson.Parse(tt.in), form.v10)
			if !json.Valid(got) || !cardJSONEqual(t, got, []byte(form.want)) {
				t.Errorf("%s (v10=%v): got %s, want %s", tt.name, form.v10, got, form.want)
			}
			if wantN := len(gjson.Parse(form.want).Array()); n != wantN {
				t.Errorf("%s (v10=%v): count %d, want %d", tt.name, form.v10, n, wantN)
			}
		}
	}
}

func TestCardVersionIs(t *testing.T) {
	for v, want := range map[string]bool{"1.0": true, "1.0.0": true, "1.0.1": true, "1.0.x": true, "1": false, "1.01": false, "1.0.": false, "11.0": false, "1.00": false, "": false} {
		if got := versionIs(v, "1", "0"); got != want {
			t.Errorf("versionIs(%q, 1, 0) = %v, want %v", v, got, want)
		}
	}
}

// TestCardPublishesOnlyWebURLs: a backend's URL fields that are not http
// or https URLs are not published in any form, and UnsafeURLs names them.
func TestCardPublishesOnlyWebURLs(t *testing.T) {
	for _, tc := range []struct {
		icon, docs, provider string
		unsafe               []string
	}{
		{"javascript:alert(1)", "file:///etc/passwd", "JAVASCRIPT:alert(1)", []string{"iconUrl", "documentationUrl", "provider.url"}},
		{"data:text/html,<script>x</script>", "//no-scheme.example/docs", "https:///no-host", []string{"iconUrl", "documentationUrl", "provider.url"}},
		{"https://b/icon", "http://b/docs", "https://b", nil},
	} {
		card := `{"name":"Backend","description":"d","url":"https://backend.internal/a2a","skills":[],
			"iconUrl":` + strconv.Quote(tc.icon) + `,"documentationUrl":` + strconv.Quote(tc.docs) + `,
			"provider":{"organization":"Org","url":` + strconv.Quote(tc.provider) + `}}`
		canon, err := ToCanonical([]byte(card))
		if err != nil {
			t.Fatal(err)
		}
		if got := UnsafeURLs(canon); !slices.Equal(got, tc.unsafe) {
			t.Errorf("UnsafeURLs = %v, want %v", got, tc.unsafe)
		}
		for _, r := range cardRenderers {
			out, err := r.render(canon, PublishOptions{URL: cardTestURL})
			if err != nil {
				t.Fatal(err)
			}
			root := gjson.ParseBytes(out)
			want := map[string]string{"iconUrl": tc.icon, "documentationUrl": tc.docs, "provider.url": tc.provider, "provider.organization": "Org"}
			if tc.unsafe != nil {
				want = map[string]string{"iconUrl": "", "documentationUrl": "", "provider.url": "", "provider.organization": "Org"}
			}
			for path, w := range want {
				if got := root.Get(path).String(); got != w {
					t.Errorf("%s %s: %s = %q, want %q", r.suffix, tc.icon, path, got, w)
				}
			}
			if tc.unsafe != nil && (root.Get("iconUrl").Exists() || root.Get("documentationUrl").Exists()) {
				t.Errorf("%s: an unsafe URL field is present: %s", r.suffix, out)
			}
		}
	}
}

func TestCardPushNotificationsCapable(t *testing.T) {
	for card, want := range map[string]bool{
		`{"name":"a","capabilities":{"pushNotifications":true}}`:  true,
		`{"name":"a","capabilities":{"pushNotifications":false}}`: false,
		`{"name":"a","capabilities":{}}`:                          false,
		`{"name":"a"}`:                                            false,
	} {
		canon, err := ToCanonical([]byte(card))
		if err != nil {
			t.Fatal(err)
		}
		if got := PushNotificationsCapable(canon); got != want {
			t.Errorf("PushNotificationsCapable(%s) = %v, want %v", card, got, want)
		}
	}
}
