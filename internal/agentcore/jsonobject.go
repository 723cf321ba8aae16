package agentcore

import (
	"errors"
	"strings"
)

// JSONObject is a JSON object kept as raw bytes: metadata, and the 0.2.5
// DataPart.data. Decoding rejects any other JSON value.
type JSONObject []byte

var errNotObject = errors.New("must be a JSON object")

// UnmarshalJSON keeps an object verbatim and leaves null as nil.
func (o *JSONObject) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*o = nil
		return nil
	}
	if !strings.HasPrefix(s, "{") {
		return errNotObject
	}
	*o = append((*o)[:0], s...)
	return nil
}

// MarshalJSON writes the object as received.
func (o JSONObject) MarshalJSON() ([]byte, error) {
	if o == nil {
		return []byte("null"), nil
	}
	return o, nil
}
