package agentcard

import (
	"fmt"

	"github.com/tidwall/gjson"

	"github.com/a2agate/gateway/internal/jsonscan"
)

// extensionParamsUnique refuses a card whose extension params (a
// google.protobuf.Struct) name a member twice, at any depth: the gateway
// (gjson: the first) and a client (ECMAScript, encoding/json: the last)
// would read different params, and protojson, hence every 1.0 client
// parsing the card, refuses it outright. normalize refuses the same in
// the messages' Structs.
func extensionParamsUnique(exts gjson.Result) error {
	var err error
	i := 0
	exts.ForEach(func(_, e gjson.Result) bool {
		if params := field(e, "params"); params.IsObject() {
			if key, _, found := jsonscan.RepeatedKey(params); found {
				err = fmt.Errorf("%w: capabilities.extensions[%d] (%.256q): params repeats key %.128q (a google.protobuf.Struct holds each key once)",
					errInvalid, i, field(e, "uri").String(), key)
				return false
			}
		}
		i++
		return true
	})
	return err
}
