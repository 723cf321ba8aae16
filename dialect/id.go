package dialect

// ID names one wire dialect of A2A JSON-RPC.
type ID uint8

const (
	// V03 is the slash-method dialect of A2A 0.2.5 and 0.3 ("0.x").
	V03 ID = iota + 1
	// V10 is the PascalCase dialect of A2A 1.0, spelled in ProtoJSON. It is
	// also the gateway's canonical form.
	V10
)

// String returns the label used in logs and metrics: "0.x" or "1.0".
func (d ID) String() string {
	switch d {
	case V03:
		return "0.x"
	case V10:
		return "1.0"
	}
	return "unknown"
}

// Version is a protocol version a backend can be configured with. It refines
// an ID: 0.2.5 and 0.3 share the 0.x wire but differ in how the extended
// card is fetched.
type Version string

const (
	Version025  Version = "0.2.5"
	Version03   Version = "0.3"
	Version10   Version = "1.0"
	VersionAuto Version = "auto"
)

// Versions lists the values a backend dialect setting may take.
var Versions = []Version{VersionAuto, Version025, Version03, Version10}

// ID reports the wire dialect of v; it is zero for VersionAuto and unknown values.
func (v Version) ID() ID {
	switch v {
	case Version025, Version03:
		return V03
	case Version10:
		return V10
	}
	return 0
}

// HeaderVersion is the A2A 1.0 service parameter naming the caller's version.
const HeaderVersion = "A2A-Version"

// Extension headers: 1.0 renamed the 0.x header.
const (
	HeaderExtensionsV10 = "A2A-Extensions"
	HeaderExtensionsV03 = "X-A2A-Extensions"
)

// ExtensionsHeader returns the name of the extensions header in dialect d.
func ExtensionsHeader(d ID) string {
	if d == V10 {
		return HeaderExtensionsV10
	}
	return HeaderExtensionsV03
}

// SupportedVersionHeader reports whether an A2A-Version header value names a
// version the gateway speaks. Patch numbers are ignored, as the 1.0 spec
// (§3.6.1) requires; an empty value means the header was absent.
func SupportedVersionHeader(v string) bool {
	if v == "" {
		return true
	}
	major, minor, _ := splitVersion(v)
	switch major {
	case "0":
		return minor == "2" || minor == "3"
	case "1":
		return minor == "0"
	}
	return false
}

func splitVersion(v string) (major, minor, rest string) {
	for i := 0; i < len(v); i++ {
		if v[i] == '.' {
			major, rest = v[:i], v[i+1:]
			for j := 0; j < len(rest); j++ {
				if rest[j] == '.' {
					return major, rest[:j], rest[j+1:]
				}
			}
			return major, rest, ""
		}
	}
	return v, "", ""
}
