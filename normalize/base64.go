package normalize

import "strings"

// validBase64 reports whether s is base64 as protojson reads a bytes field
// (a 1.0 part's raw, which a 0.x file's bytes becomes): the standard or
// the URL-safe alphabet, not both, padded or not. Line breaks are skipped,
// as Go's decoder skips them. It decodes nothing, so a large part costs a
// scan and no allocation.
func validBase64(s string) bool {
	urlSafe := strings.ContainsAny(s, "-_")
	n, pad := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\r' || c == '\n':
			continue
		case c == '=':
			pad++
		case pad > 0:
			return false // data after padding
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '+' || c == '/':
			if urlSafe {
				return false
			}
		case c == '-' || c == '_':
		default:
			return false
		}
		n++
	}
	if pad > 0 {
		return pad <= 2 && n%4 == 0
	}
	return n%4 != 1
}

// wantBase64 refuses a part's bytes that are not base64.
func wantBase64(s, name string) error {
	if !validBase64(s) {
		return at(fail("is not base64 (standard or URL-safe alphabet, padded or not), as a part's bytes must be"), name)
	}
	return nil
}
