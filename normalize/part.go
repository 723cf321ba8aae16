package normalize

import (
	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/dialect"
	"github.com/a2agate/gateway/internal/jsonscan"
)

const (
	pKind = iota
	pText
	pRaw
	pURL
	pData
	pFile
	pMetadata
	pFilename
	pMediaType
)

var partKeys = [...]keySpec{
	pKind:      {"kind", ""},
	pText:      {"text", ""},
	pRaw:       {"raw", ""},
	pURL:       {"url", ""},
	pData:      {"data", ""},
	pFile:      {"file", ""},
	pMetadata:  {"metadata", ""},
	pFilename:  {"filename", ""},
	pMediaType: {"mediaType", "media_type"},
}

const (
	fBytes = iota
	fURI
	fMimeType
	fName
)

// fileKeys are the members of a 0.x FileWithBytes / FileWithUri.
var fileKeys = [...]keySpec{
	fBytes:    {"bytes", ""},
	fURI:      {"uri", ""},
	fMimeType: {"mimeType", ""},
	fName:     {"name", ""},
}

// compatFlag marks a 0.x DataPart that wraps a non-object 1.0 value as
// {"value": X}; the Python, Go and JS SDKs all use this key.
const compatFlag = "data_part_compat"

// part is one Part read in either dialect, reduced to its content.
type part struct {
	m         members
	content   int          // pText, pRaw, pURL or pData
	value     gjson.Result // the content value (unwrapped from a 0.x file)
	mediaType gjson.Result
	filename  gjson.Result
	fromV03   bool // spelled the 0.x way (kind or file present)
	// fileUnknown tells that a 0.x file object has members fileKeys does
	// not know; a 0.x target keeps them, as it keeps a part's own.
	fileUnknown bool
}

func readPart(sp *jsonscan.Spans, obj gjson.Result, p *part) error {
	if err := collectIn(sp, obj, partKeys[:], &p.m); err != nil {
		return err
	}
	v := &p.m.vals
	p.content = -1
	p.fromV03 = v[pKind].Exists() || v[pFile].Exists()
	n := 0
	for _, i := range []int{pText, pRaw, pURL, pData, pFile} {
		if v[i].Exists() {
			n++
			p.content = i
		}
	}
	switch {
	case n == 0:
		return fail("has no content: want one of text, file or data (1.0: text, raw, url or data)")
	case n > 1:
		return fail("has more than one content: a part carries exactly one of text, file or data (1.0: text, raw, url or data)")
	}
	if k := v[pKind]; k.Exists() {
		want := "file"
		switch p.content {
		case pText:
			want = "text"
		case pData:
			want = "data"
		}
		if k.Type != gjson.String || (k.Str != "text" && k.Str != "file" && k.Str != "data") {
			return at(fail("unknown part kind %s (want \"text\", \"file\" or \"data\")", k.Raw), "kind")
		}
		if k.Str != want {
			return at(fail("is %s but the part carries %s content", k.Raw, partKeys[p.content].camel), "kind")
		}
	}
	p.value = v[p.content]
	p.mediaType, p.filename = v[pMediaType], v[pFilename]
	switch p.content {
	case pText:
		if err := wantString(p.value, "text"); err != nil {
			return err
		}
	case pRaw, pURL:
		if err := requireString(p.value, partKeys[p.content].camel); err != nil {
			return err
		}
		if p.content == pRaw {
			if err := wantBase64(p.value.Str, "raw"); err != nil {
				return err
			}
		}
	case pFile:
		if err := readFile(sp, p); err != nil {
			return at(err, "file")
		}
	case pData:
		// A google.protobuf.Value (1.0) or Struct (0.3 proto).
		if err := uniqueKeys(p.value); err != nil {
			return at(err, "data")
		}
	}
	if err := wantStruct(v[pMetadata], "metadata"); err != nil {
		return err
	}
	if p.mediaType.Exists() {
		if err := wantString(p.mediaType, "mediaType"); err != nil {
			return err
		}
	}
	if p.filename.Exists() {
		return wantString(p.filename, "filename")
	}
	return nil
}

// readFile lifts a 0.x file object's content into p.
func readFile(sp *jsonscan.Spans, p *part) error {
	var f members
	if err := collectIn(sp, p.value, fileKeys[:], &f); err != nil {
		return err
	}
	p.fileUnknown = f.unknown
	b, u := f.vals[fBytes], f.vals[fURI]
	switch {
	case b.Exists() && u.Exists():
		return fail("has both bytes and uri: a file carries exactly one")
	case b.Exists():
		p.content, p.value = pRaw, b
		if err := requireString(b, "bytes"); err != nil {
			return err
		}
		if err := wantBase64(b.Str, "bytes"); err != nil {
			return err
		}
	case u.Exists():
		p.content, p.value = pURL, u
		if err := requireString(u, "uri"); err != nil {
			return err
		}
	default:
		return fail("has no content: want bytes or uri")
	}
	if mt := f.vals[fMimeType]; mt.Exists() {
		if p.mediaType.Exists() {
			return fail("names its media type twice (file.mimeType and mediaType)")
		}
		p.mediaType = mt
	}
	if nm := f.vals[fName]; nm.Exists() {
		if p.filename.Exists() {
			return fail("names its file name twice (file.name and filename)")
		}
		p.filename = nm
	}
	if err := wantString(p.mediaType, "mimeType"); p.mediaType.Exists() && err != nil {
		return err
	}
	if err := wantString(p.filename, "name"); p.filename.Exists() && err != nil {
		return err
	}
	return nil
}

// parts writes an array of parts in dialect to.
func (c *conv) parts(arr gjson.Result, to dialect.ID) error {
	return c.array(arr, func(v gjson.Result) error {
		var p part
		if err := readPart(c.sp, v, &p); err != nil {
			return err
		}
		if to == dialect.V10 {
			if p.fileUnknown && c.request {
				// A 1.0 part has no file object: its content and names move
				// to the part, and a member beside them would be lost.
				return at(fail("has %s, which a 1.0 part (this agent's backend speaks A2A 1.0) has no place for",
					unknownNames(v.Get("file"), fileKeys[:])), "file")
			}
			c.partV10(v, &p)
		} else {
			c.partV03(v, &p)
		}
		return nil
	})
}

func (c *conv) partV10(obj gjson.Result, p *part) {
	w := c.w
	v := &p.m.vals
	w.changed = w.changed || p.fromV03 || p.m.renamed
	meta := v[pMetadata]
	w.open('{')
	value, unwrapped := p.value, false
	if p.content == pData && c.from == dialect.V03 {
		value, unwrapped = unwrapCompatData(value, meta)
	}
	w.key(partKeys[p.content].camel)
	w.raw(value.Raw)
	if meta.Exists() {
		if unwrapped {
			w.changed = true
			metadataWithout(w, meta, compatFlag)
		} else {
			w.key("metadata")
			w.raw(meta.Raw)
		}
	}
	if p.filename.Exists() && !c.skipDefault(p.filename, dialect.V10) {
		w.key("filename")
		w.raw(p.filename.Raw)
	}
	if p.mediaType.Exists() && !c.skipDefault(p.mediaType, dialect.V10) {
		w.key("mediaType")
		w.raw(p.mediaType.Raw)
	}
	w.closeObject(obj, partKeys[:], p.m.unknown)
}

// unwrapCompatData undoes the SDKs' wrapping of a non-object value.
func unwrapCompatData(data, meta gjson.Result) (gjson.Result, bool) {
	if !meta.Get(compatFlag).Bool() || !data.IsObject() {
		return data, false
	}
	var inner gjson.Result
	n := 0
	jsonscan.Each(data, func(k, v gjson.Result) bool {
		n++
		if k.Str == "value" {
			inner = v
		}
		return n < 2
	})
	if n != 1 || !inner.Exists() {
		return data, false
	}
	return inner, true
}

// metadataWithout writes a metadata member without key drop, and nothing
// when that leaves it empty.
func metadataWithout(w *writer, meta gjson.Result, drop string) {
	mark := len(w.buf)
	w.key("metadata")
	w.open('{')
	n := 0
	jsonscan.Each(meta, func(k, v gjson.Result) bool {
		if k.Str != drop {
			w.member(k, v)
			n++
		}
		return true
	})
	if n == 0 {
		w.buf = w.buf[:mark]
		return
	}
	w.close('}')
}

func (c *conv) partV03(obj gjson.Result, p *part) {
	w := c.w
	v := &p.m.vals
	// Only a part spelled wholly the 0.x way passes through: a 1.0 url or raw
	// beside a 0.x kind, or a top-level mediaType or filename, means nothing
	// to a 0.x peer.
	spelledV03 := v[pKind].Exists() && !v[pMediaType].Exists() && !v[pFilename].Exists() &&
		(p.content == pText || p.content == pData || v[pFile].Exists())
	w.changed = w.changed || !spelledV03 || p.m.renamed
	meta := v[pMetadata]
	w.open('{')
	wrap := false
	switch p.content {
	case pText:
		w.key("kind")
		w.quoted("text")
		w.key("text")
		w.raw(p.value.Raw)
		// 0.x text parts have no media type or file name: dropped, as every
		// SDK's compat layer does.
	case pRaw, pURL:
		w.key("kind")
		w.quoted("file")
		w.key("file")
		w.open('{')
		if p.content == pRaw {
			w.key("bytes")
		} else {
			w.key("uri")
		}
		w.raw(p.value.Raw)
		if p.mediaType.Exists() {
			w.key("mimeType")
			w.raw(p.mediaType.Raw)
		}
		if p.filename.Exists() {
			w.key("name")
			w.raw(p.filename.Raw)
		}
		if p.fileUnknown {
			w.unknownMembers(v[pFile], fileKeys[:])
		}
		w.close('}')
	case pData:
		w.key("kind")
		w.quoted("data")
		w.key("data")
		if wrap = !p.value.IsObject(); wrap {
			w.changed = true
			w.raw(`{"value":`)
			w.raw(p.value.Raw)
			w.close('}')
		} else {
			w.raw(p.value.Raw)
		}
	}
	switch {
	case wrap:
		w.key("metadata")
		w.open('{')
		jsonscan.Each(meta, func(k, v gjson.Result) bool {
			if k.Str != compatFlag {
				w.member(k, v)
			}
			return true
		})
		w.key(compatFlag)
		w.raw("true")
		w.close('}')
	case meta.Exists():
		w.key("metadata")
		w.raw(meta.Raw)
	}
	w.closeObject(obj, partKeys[:], p.m.unknown)
}
