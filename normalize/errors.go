package normalize

import (
	"errors"
	"fmt"
	"strings"

	"github.com/a2agate/gateway/dialect"
)

// Error is an A2A error in dialect-neutral form. The gateway raises it for
// bad input and backend failures; package proxy renders it in the caller's
// dialect.
type Error struct {
	Kind    dialect.ErrorKind
	Message string
	// Metadata is the ErrorInfo metadata in 1.0 and the data object in 0.x:
	// ordered key/value pairs so rendered errors are byte-stable.
	Metadata []KV
	Err      error
}

// KV is one metadata entry.
type KV struct{ Key, Value string }

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of kind with a formatted message.
func Errorf(kind dialect.ErrorKind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// AsError returns err as an *Error, wrapping any other error as kind.
func AsError(err error, kind dialect.ErrorKind) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Kind: kind, Message: err.Error(), Err: err}
}

// pathError is a translation failure at a JSON path inside a document. The
// proxy turns it into InvalidParams for requests and InvalidAgentResponse
// for backend replies, so one translator serves both.
type pathError struct {
	path []string
	msg  string
}

func (e *pathError) Error() string {
	if len(e.path) == 0 {
		return e.msg
	}
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		p := e.path[i]
		if i != len(e.path)-1 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	b.WriteString(": ")
	b.WriteString(e.msg)
	return b.String()
}

func fail(format string, args ...any) error {
	return &pathError{msg: fmt.Sprintf(format, args...)}
}

// at prefixes err's path with one step. Paths are built on the way out of the
// recursion, so the happy path allocates nothing for them.
func at(err error, step string) error {
	if pe, ok := err.(*pathError); ok {
		pe.path = append(pe.path, step)
		return pe
	}
	return err
}

func atIndex(err error, i int) error { return at(err, fmt.Sprintf("[%d]", i)) }
